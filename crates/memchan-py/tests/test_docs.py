"""The examples in the docstrings (the extension's classes and the package) run as
written."""

import doctest

import pytest

import memchan

DOCUMENTED = [
    memchan,
    memchan.Cluster,
    memchan.Cluster.join,
    memchan.Lock,
    memchan.TxMapping,
    memchan.RxMapping,
    memchan.Rma,
    memchan.Comm,
]


@pytest.mark.parametrize("obj", DOCUMENTED, ids=lambda o: getattr(o, "__qualname__", o.__name__))
def test_docstring_examples(obj):
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(obj, obj.__name__, globs={}) if t.examples]
    assert tests, f"{obj.__name__} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {obj.__name__}"
