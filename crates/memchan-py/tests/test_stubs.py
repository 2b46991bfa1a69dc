"""The type stubs (_memchan.pyi, shipped in the package) describe the extension as
built: the same names, and every method a stub declares exists at run time."""

import ast
import inspect
from pathlib import Path

import memchan
from memchan import _memchan

STUB = Path(memchan.__file__).with_name("_memchan.pyi")
# Stub-only helpers, and protocol methods the interpreter provides another way.
STUB_ONLY = {"Buffer", "Cmp", "Outcome"}
RUNTIME_ONLY_METHODS = {"__buffer__"}


def stub_tree():
    assert STUB.is_file(), "the wheel ships _memchan.pyi"
    assert STUB.with_name("py.typed").is_file()
    return ast.parse(STUB.read_text())


def test_stub_names_match_the_module():
    tree = stub_tree()
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    runtime = {n for n in dir(_memchan) if not n.startswith("_")}
    assert names - STUB_ONLY == runtime
    assert set(memchan.__all__) == runtime


def test_stub_methods_exist():
    for node in stub_tree().body:
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(_memchan, node.name)
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name not in RUNTIME_ONLY_METHODS:
                assert hasattr(cls, item.name), f"{node.name}.{item.name}"
        declared = {i.name for i in node.body if isinstance(i, ast.FunctionDef)}
        declared |= {i.target.id for i in node.body if isinstance(i, ast.AnnAssign)}
        public = {
            n
            for n, _ in inspect.getmembers(cls)
            if not n.startswith("_") and not issubclass(cls, BaseException)
        }
        assert public <= declared, f"{node.name} lacks stubs for {public - declared}"
