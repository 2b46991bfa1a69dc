//! Expands shmem.h's typed families from the one type table, `src/shmem/table.rs`:
//! `$OUT_DIR/shmem_gen.rs` (the exported Rust functions, each a line over a generic
//! helper of `src/shmem/`) and `$OUT_DIR/shmem_gen.h` (their C prototypes, which
//! `include/shmem.h` carries between its GENERATED markers; a unit test compares).

use std::fmt::Write as _;

include!("src/shmem/table.rs");

/// One exported function: C return type, Rust return type (`""` for void), name,
/// parameters as (C type, Rust type, name), and the Rust body.
struct Fun<'a> {
    c_ret: &'a str,
    rs_ret: &'a str,
    name: String,
    params: Vec<(String, String, &'a str)>,
    body: String,
}

#[derive(Default)]
struct Out {
    rs: String,
    h: String,
    /// While set, each function also gets its `shmem_ctx_` form (an inline call of
    /// it: contexts map to the default one), collected here for the header's end.
    ctx_on: bool,
    ctx: String,
}

impl Out {
    fn section(&mut self, title: &str) {
        let _ = writeln!(self.h, "\n/* {title} */");
    }

    fn fun(&mut self, f: Fun) {
        let cparams: Vec<String> = f
            .params
            .iter()
            .map(|(c, _, n)| {
                if c.ends_with('*') {
                    format!("{c}{n}")
                } else {
                    format!("{c} {n}")
                }
            })
            .collect();
        let cparams = if cparams.is_empty() {
            "void".to_string()
        } else {
            cparams.join(", ")
        };
        let sep = if f.c_ret.ends_with('*') { "" } else { " " };
        let _ = writeln!(self.h, "{}{sep}{}({cparams});", f.c_ret, f.name);
        if self.ctx_on {
            let rest = f.name.strip_prefix("shmem_").expect("shmem_ names");
            let args: Vec<&str> = f.params.iter().map(|(_, _, n)| *n).collect();
            let ret = if f.c_ret == "void" { "" } else { "return " };
            let _ = writeln!(
                self.ctx,
                "static inline {}{sep}shmem_ctx_{rest}(shmem_ctx_t ctx, {cparams}) {{ (void)ctx; {ret}{}({}); }}",
                f.c_ret,
                f.name,
                args.join(", ")
            );
        }
        let rparams: Vec<String> = f
            .params
            .iter()
            .map(|(_, r, n)| format!("{n}: {r}"))
            .collect();
        // Only `rma::`, `coll::` and `sync::wait_set` helpers are unsafe functions (they read or write the caller's
        // buffers); the others check everything they touch.
        let body = if f.body.starts_with("rma::")
            || f.body.contains("coll::")
            || f.body.starts_with("sync::wait_set")
        {
            format!(
                "// SAFETY: forwarded caller contract (see # Safety).\n    unsafe {{ {} }}",
                f.body
            )
        } else {
            f.body.clone()
        };
        let ret = if f.rs_ret.is_empty() {
            String::new()
        } else {
            format!(" -> {}", f.rs_ret)
        };
        let _ = writeln!(
            self.rs,
            "/// `{}`: see include/shmem.h.\n///\n/// # Safety\n/// The OpenSHMEM contract: pointers to live memory of the sizes given; \
             symmetric ones are checked.\n#[no_mangle]\npub unsafe extern \"C\" fn {}({}){ret} {{\n    \
             const CALL: &str = \"{}\";\n    {}\n}}\n",
            f.name,
            f.name,
            rparams.join(", "),
            f.name,
            body
        );
        let args: Vec<&str> = f.params.iter().map(|(_, _, n)| *n).collect();
        let _ = writeln!(
            self.rs,
            "/// `p{name}`, the profiling interface's entry to [`{name}`].\n///\n/// # Safety\n/// As `{name}`.\n\
             #[no_mangle]\npub unsafe extern \"C\" fn p{name}({params}){ret} {{\n    \
             // SAFETY: the caller's contract is `{name}`'s.\n    unsafe {{ {name}({args}) }}\n}}\n",
            name = f.name,
            params = rparams.join(", "),
            args = args.join(", "),
        );
    }
}

fn p(c: impl Into<String>, r: impl Into<String>, n: &str) -> (String, String, &str) {
    (c.into(), r.into(), n)
}

fn main() {
    println!("cargo::rerun-if-changed=src/shmem/table.rs");
    println!("cargo::rerun-if-changed=build.rs");
    // libmemchan's calls to its own routines (pshmem_X to shmem_X, shmem_init_thread
    // to shmem_init) bind to its own definitions: a profiling library's shmem_X,
    // which interposes for the program's calls, is never re-entered from inside.
    println!("cargo::rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    // Every RMA family has ctx forms; so do the 1.5 atomics (switched off after).
    let mut o = Out {
        ctx_on: true,
        ..Out::default()
    };

    // Typed RMA.
    o.section(
        "Typed RMA: put/get/p/g, _nbi, iput/iget (dest/source on the remote side symmetric).",
    );
    for t in TYPES.iter().filter(|t| t.has & RMA != 0) {
        let (n, c, r) = (t.name, t.c, t.rust);
        let cp = format!("{c} *");
        let ccp = format!("const {c} *");
        for (op, nbi) in [("put", ""), ("get", ""), ("put", "_nbi"), ("get", "_nbi")] {
            o.fun(Fun {
                c_ret: "void",
                rs_ret: "",
                name: format!("shmem_{n}_{op}{nbi}"),
                params: vec![
                    p(cp.clone(), format!("*mut {r}"), "dest"),
                    p(ccp.clone(), format!("*const {r}"), "source"),
                    p("size_t", "usize", "nelems"),
                    p("int", "c_int", "pe"),
                ],
                body: format!(
                    "rma::{op}_elems(CALL, dest.cast(), source.cast(), nelems, size_of::<{r}>(), pe)"
                ),
            });
        }
        for op in ["iput", "iget"] {
            o.fun(Fun {
                c_ret: "void",
                rs_ret: "",
                name: format!("shmem_{n}_{op}"),
                params: vec![
                    p(cp.clone(), format!("*mut {r}"), "dest"),
                    p(ccp.clone(), format!("*const {r}"), "source"),
                    p("ptrdiff_t", "isize", "dst"),
                    p("ptrdiff_t", "isize", "sst"),
                    p("size_t", "usize", "nelems"),
                    p("int", "c_int", "pe"),
                ],
                body: format!(
                    "rma::{op}(CALL, dest.cast(), source.cast(), dst, sst, nelems, size_of::<{r}>(), pe)"
                ),
            });
        }
        if t.has & OPAQUE == 0 {
            o.fun(Fun {
                c_ret: "void",
                rs_ret: "",
                name: format!("shmem_{n}_p"),
                params: vec![
                    p(cp.clone(), format!("*mut {r}"), "dest"),
                    p(c, r, "value"),
                    p("int", "c_int", "pe"),
                ],
                body: "rma::p(CALL, dest, value, pe)".into(),
            });
            o.fun(Fun {
                c_ret: c,
                rs_ret: r,
                name: format!("shmem_{n}_g"),
                params: vec![
                    p(ccp.clone(), format!("*const {r}"), "source"),
                    p("int", "c_int", "pe"),
                ],
                body: "rma::g(CALL, source, pe)".into(),
            });
        } else {
            // No Rust type passes a `long double` by value: inline over putmem/getmem.
            let _ = writeln!(
                o.h,
                "static inline void shmem_{n}_p({c} *dest, {c} value, int pe) {{ shmem_putmem(dest, &value, sizeof value, pe); }}\n\
                 static inline {c} shmem_{n}_g(const {c} *source, int pe) {{ {c} v; shmem_getmem(&v, source, sizeof v, pe); return v; }}"
            );
        }
    }

    o.section(
        "Sized RMA: putN/getN/iputN/igetN and _nbi (N bits per element), putmem/getmem _nbi.",
    );
    for bits in SIZES {
        let sz = bits / 8;
        for (op, nbi) in [("put", ""), ("get", ""), ("put", "_nbi"), ("get", "_nbi")] {
            o.fun(Fun {
                c_ret: "void",
                rs_ret: "",
                name: format!("shmem_{op}{bits}{nbi}"),
                params: vec![
                    p("void *", "*mut c_void", "dest"),
                    p("const void *", "*const c_void", "source"),
                    p("size_t", "usize", "nelems"),
                    p("int", "c_int", "pe"),
                ],
                body: format!("rma::{op}_elems(CALL, dest, source, nelems, {sz}, pe)"),
            });
        }
        for op in ["iput", "iget"] {
            o.fun(Fun {
                c_ret: "void",
                rs_ret: "",
                name: format!("shmem_{op}{bits}"),
                params: vec![
                    p("void *", "*mut c_void", "dest"),
                    p("const void *", "*const c_void", "source"),
                    p("ptrdiff_t", "isize", "dst"),
                    p("ptrdiff_t", "isize", "sst"),
                    p("size_t", "usize", "nelems"),
                    p("int", "c_int", "pe"),
                ],
                body: format!("rma::{op}(CALL, dest, source, dst, sst, nelems, {sz}, pe)"),
            });
        }
    }
    for op in ["put", "get"] {
        o.fun(Fun {
            c_ret: "void",
            rs_ret: "",
            name: format!("shmem_{op}mem_nbi"),
            params: vec![
                p("void *", "*mut c_void", "dest"),
                p("const void *", "*const c_void", "source"),
                p("size_t", "usize", "nelems"),
                p("int", "c_int", "pe"),
            ],
            body: format!("rma::{op}_elems(CALL, dest, source, nelems, 1, pe)"),
        });
    }

    // Typed put with signal.
    o.section(
        "Put with signal: the data, then the signal word (SHMEM_SIGNAL_SET/ADD) on the same PE.",
    );
    // Typed (`shmem_TYPE_put_signal`), then sized and untyped (1.5: N bits per
    // element, or bytes for `putmem`): (name part, C and Rust element pointer types,
    // element size as Rust, whether the pointers need a cast to `c_void`).
    let mut signal: Vec<(String, String, String, String, bool)> = TYPES
        .iter()
        .filter(|t| t.has & RMA != 0)
        .map(|t| {
            let (c, r) = (t.c, t.rust);
            (
                format!("{}_put_signal", t.name),
                format!("{c} *"),
                format!("*mut {r}"),
                format!("size_of::<{r}>()"),
                true,
            )
        })
        .collect();
    signal.extend(
        SIZES
            .iter()
            .map(|b| (b.to_string(), b / 8))
            .chain([("mem".to_string(), 1)])
            .map(|(n, sz)| {
                (
                    format!("put{n}_signal"),
                    "void *".to_string(),
                    "*mut c_void".to_string(),
                    sz.to_string(),
                    false,
                )
            }),
    );
    for (name, dest_c, dest_r, es, cast) in signal {
        let src_c = format!("const {}", dest_c);
        let src_r = dest_r.replacen("*mut", "*const", 1);
        let (d, s) = if cast {
            ("dest.cast()", "source.cast()")
        } else {
            ("dest", "source")
        };
        for nbi in ["", "_nbi"] {
            o.fun(Fun {
                c_ret: "void",
                rs_ret: "",
                name: format!("shmem_{name}{nbi}"),
                params: vec![
                    p(dest_c.clone(), dest_r.clone(), "dest"),
                    p(src_c.clone(), src_r.clone(), "source"),
                    p("size_t", "usize", "nelems"),
                    p("uint64_t *", "*mut u64", "sig_addr"),
                    p("uint64_t", "u64", "signal"),
                    p("int", "c_int", "sig_op"),
                    p("int", "c_int", "pe"),
                ],
                body: format!(
                    "rma::put_signal(CALL, {d}, {s}, nelems, {es}, sig_addr, signal, sig_op, pe)"
                ),
            });
        }
    }

    // Atomics.
    o.section("Atomics (8- or 4-byte words, naturally aligned, symmetric), 1.4/1.5 names.");
    for t in TYPES
        .iter()
        .filter(|t| t.has & (AMO_EXT | AMO_STD | AMO_BIT) != 0)
    {
        let (n, c, r) = (t.name, t.c, t.rust);
        let cp = format!("{c} *");
        let amos = amo_ops(t.has);
        for (op, args, ret) in amos {
            let name = format!("shmem_{n}_atomic_{op}");
            amo_fun(&mut o, name, c, r, &cp, op, args, ret);
        }
    }
    o.section(
        "Nonblocking fetching atomics (1.4): the fetched value is in *fetch at the next \
         quiet (here, at return).",
    );
    for t in TYPES
        .iter()
        .filter(|t| t.has & (AMO_EXT | AMO_STD | AMO_BIT) != 0)
    {
        let (n, c, r) = (t.name, t.c, t.rust);
        let cp = format!("{c} *");
        for (op, args, ret) in amo_ops(t.has) {
            if ret {
                let name = format!("shmem_{n}_atomic_{op}_nbi");
                amo_nbi_fun(&mut o, name, c, r, &cp, op, args);
            }
        }
    }
    o.ctx_on = false;
    o.section("Atomics, OpenSHMEM 1.0-era names.");
    for t in TYPES.iter().filter(|t| t.has & AMO_OLD != 0) {
        let (n, c, r) = (t.name, t.c, t.rust);
        let cp = format!("{c} *");
        for (op, args, ret) in amo_ops(t.has) {
            let old = match op {
                "fetch_add" => "fadd",
                "fetch_inc" => "finc",
                "compare_swap" => "cswap",
                "fetch" | "set" | "swap" | "add" | "inc" => op,
                _ => continue,
            };
            amo_fun(&mut o, format!("shmem_{n}_{old}"), c, r, &cp, op, args, ret);
        }
    }

    // Point-to-point synchronization.
    o.section("wait_until / test (ivar local and symmetric; cmp is SHMEM_CMP_*).");
    for t in TYPES.iter().filter(|t| t.has & WAIT != 0) {
        let (n, c, r) = (t.name, t.c, t.rust);
        let vp = format!("volatile {c} *");
        o.fun(Fun {
            c_ret: "void",
            rs_ret: "",
            name: format!("shmem_{n}_wait_until"),
            params: vec![
                p(vp.clone(), format!("*mut {r}"), "ivar"),
                p("int", "c_int", "cmp"),
                p(c, r, "cmp_value"),
            ],
            body: "sync::wait_until(CALL, ivar, cmp, cmp_value);".into(),
        });
        o.fun(Fun {
            c_ret: "int",
            rs_ret: "c_int",
            name: format!("shmem_{n}_test"),
            params: vec![
                p(vp.clone(), format!("*mut {r}"), "ivar"),
                p("int", "c_int", "cmp"),
                p(c, r, "cmp_value"),
            ],
            body: "sync::test(CALL, ivar, cmp, cmp_value)".into(),
        });
        for (kind, block) in [("wait_until", "true"), ("test", "false")] {
            for (mode, m) in [("all", "All"), ("any", "Any"), ("some", "Some")] {
                for vector in [false, true] {
                    let mut params = vec![
                        p(format!("{c} *"), format!("*mut {r}"), "ivars"),
                        p("size_t", "usize", "nelems"),
                    ];
                    if mode == "some" {
                        params.push(p("size_t *", "*mut usize", "indices"));
                    }
                    params.push(p("const int *", "*const c_int", "status"));
                    params.push(p("int", "c_int", "cmp"));
                    let (vals, val) = if vector {
                        params.push(p(format!("{c} *"), format!("*mut {r}"), "cmp_values"));
                        ("cmp_values", format!("{r}::of_bits(0)"))
                    } else {
                        params.push(p(c, r, "cmp_value"));
                        ("std::ptr::null_mut()", "cmp_value".to_string())
                    };
                    let idx = if mode == "some" {
                        "indices"
                    } else {
                        "std::ptr::null_mut()"
                    };
                    let call = format!(
                        "sync::wait_set(CALL, ivars, nelems, {idx}, status, cmp, {vals}, {val}, sync::Mode::{m}, {block})"
                    );
                    let (c_ret, rs_ret, body) = match (kind, mode) {
                        ("wait_until", "all") => ("void", "", format!("{call};")),
                        ("test", "all") => ("int", "c_int", format!("{call} as c_int")),
                        _ => ("size_t", "usize", call),
                    };
                    let suffix = if vector { "_vector" } else { "" };
                    o.fun(Fun {
                        c_ret,
                        rs_ret,
                        name: format!("shmem_{n}_{kind}_{mode}{suffix}"),
                        params,
                        body,
                    });
                }
            }
        }
        if t.has & WAIT_OLD != 0 {
            o.fun(Fun {
                c_ret: "void",
                rs_ret: "",
                name: format!("shmem_{n}_wait"),
                params: vec![p(vp, format!("*mut {r}"), "ivar"), p(c, r, "cmp_value")],
                body: "sync::wait_until(CALL, ivar, sync::CMP_NE, cmp_value);".into(),
            });
        }
    }

    // Collectives.
    o.section("Active-set reductions, OpenSHMEM 1.0-era *_to_all (pWrk unused; pSync symmetric).");
    for t in TYPES.iter() {
        let (n, c, r) = (t.name, t.c, t.rust);
        let mut ops = Vec::new();
        if t.has & TOALL != 0 {
            ops.extend(["sum", "prod", "min", "max"]);
        }
        if t.has & TOALL_BIT != 0 {
            ops.extend(["and", "or", "xor"]);
        }
        if t.has & CPLX != 0 {
            ops.extend(["sum", "prod"]);
        }
        for op in ops {
            o.fun(Fun {
                c_ret: "void",
                rs_ret: "",
                name: format!("shmem_{n}_{op}_to_all"),
                params: vec![
                    p(format!("{c} *"), format!("*mut {r}"), "dest"),
                    p(format!("const {c} *"), format!("*const {r}"), "source"),
                    p("int", "c_int", "nreduce"),
                    p("int", "c_int", "PE_start"),
                    p("int", "c_int", "logPE_stride"),
                    p("int", "c_int", "PE_size"),
                    p(format!("{c} *"), format!("*mut {r}"), "pWrk"),
                    p("long *", "*mut i64", "pSync"),
                ],
                body: format!(
                    "let _ = pWrk; coll::to_all(CALL, dest, source, nreduce, PE_start, logPE_stride, PE_size, pSync, {})",
                    op_fn(op, r)
                ),
            });
        }
    }
    o.section("Team reductions (1.5): 0 on success.");
    for t in TYPES.iter() {
        let (n, c, r) = (t.name, t.c, t.rust);
        let mut ops = Vec::new();
        if t.has & RED_BIT != 0 {
            ops.extend(["and", "or", "xor"]);
        }
        if t.has & RED != 0 {
            ops.extend(["max", "min", "sum", "prod"]);
        }
        if t.has & CPLX != 0 {
            ops.extend(["sum", "prod"]);
        }
        for op in ops {
            o.fun(Fun {
                c_ret: "int",
                rs_ret: "c_int",
                name: format!("shmem_{n}_{op}_reduce"),
                params: vec![
                    p("shmem_team_t", "Team", "team"),
                    p(format!("{c} *"), format!("*mut {r}"), "dest"),
                    p(format!("const {c} *"), format!("*const {r}"), "source"),
                    p("size_t", "usize", "nreduce"),
                ],
                body: format!(
                    "coll::reduce(CALL, team, dest, source, nreduce, {})",
                    op_fn(op, r)
                ),
            });
        }
    }
    o.section("Team broadcast/collect/fcollect (1.5), per type: 0 on success.");
    for t in TYPES.iter().filter(|t| t.has & RMA != 0) {
        let (n, c, r) = (t.name, t.c, t.rust);
        for op in ["broadcast", "collect", "fcollect"] {
            let mut params = vec![
                p("shmem_team_t", "Team", "team"),
                p(format!("{c} *"), format!("*mut {r}"), "dest"),
                p(format!("const {c} *"), format!("*const {r}"), "source"),
                p("size_t", "usize", "nelems"),
            ];
            let root = if op == "broadcast" {
                params.push(p("int", "c_int", "PE_root"));
                "PE_root"
            } else {
                "0"
            };
            o.fun(Fun {
                c_ret: "int",
                rs_ret: "c_int",
                name: format!("shmem_{n}_{op}"),
                params,
                body: format!(
                    "coll::team_{op}(CALL, team, dest.cast(), source.cast(), nelems, size_of::<{r}>(), {root})"
                ),
            });
        }
    }
    o.section("Team alltoall / alltoalls (1.5), per type: 0 on success.");
    for t in TYPES.iter().filter(|t| t.has & RMA != 0) {
        let (n, c, r) = (t.name, t.c, t.rust);
        for strided in [false, true] {
            let mut params = vec![
                p("shmem_team_t", "Team", "team"),
                p(format!("{c} *"), format!("*mut {r}"), "dest"),
                p(format!("const {c} *"), format!("*const {r}"), "source"),
            ];
            if strided {
                params.push(p("ptrdiff_t", "isize", "dst"));
                params.push(p("ptrdiff_t", "isize", "sst"));
            }
            params.push(p("size_t", "usize", "nelems"));
            let (suffix, strides) = if strided {
                ("alltoalls", "dst, sst")
            } else {
                ("alltoall", "1, 1")
            };
            o.fun(Fun {
                c_ret: "int",
                rs_ret: "c_int",
                name: format!("shmem_{n}_{suffix}"),
                params,
                body: format!(
                    "coll::team_alltoall(CALL, team, dest.cast(), source.cast(), {strides}, nelems, size_of::<{r}>())"
                ),
            });
        }
    }

    o.section("Contexts map to the default context: the ctx forms of RMA and atomics.");
    let ctx = std::mem::take(&mut o.ctx);
    o.h.push_str(&ctx);
    for t in TYPES.iter().filter(|t| t.has & OPAQUE != 0) {
        let (n, c) = (t.name, t.c);
        let _ = writeln!(
            o.h,
            "static inline void shmem_ctx_{n}_p(shmem_ctx_t ctx, {c} *dest, {c} value, int pe) {{ (void)ctx; shmem_{n}_p(dest, value, pe); }}\n\
             static inline {c} shmem_ctx_{n}_g(shmem_ctx_t ctx, const {c} *source, int pe) {{ (void)ctx; return shmem_{n}_g(source, pe); }}"
        );
    }

    generics(&mut o.h);

    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("shmem_gen.rs"), o.rs).expect("write shmem_gen.rs");
    std::fs::write(out.join("shmem_gen.h"), o.h).expect("write shmem_gen.h");

    // pshmem.h from the header as it stands (a test keeps both current).
    println!("cargo::rerun-if-changed=include/shmem.h");
    let header = std::fs::read_to_string("include/shmem.h").expect("read include/shmem.h");
    std::fs::write(out.join("pshmem.h"), pshmem_h(&header)).expect("write pshmem.h");
}

/// The types whose names begin with `shmem_`: the profiling names leave them alone.
const SHMEM_TYPES: [&str; 3] = ["shmem_ctx_t", "shmem_team_t", "shmem_team_config_t"];

/// `text` with every routine name `shmem_X` renamed `pshmem_X`.
fn shift(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(at) = rest.find("shmem_") {
        let before = rest[..at].chars().next_back();
        let ident_start = !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let word: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        out.push_str(&rest[..at]);
        if ident_start && !SHMEM_TYPES.contains(&word.as_str()) {
            out.push('p');
        }
        out.push_str(&word);
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The name a declaration or definition gives its function, if it is a `shmem_` one.
fn routine(statement: &str) -> Option<&str> {
    let head = &statement[..statement.find('(')?];
    let name = head
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()?;
    name.starts_with("shmem_").then_some(name)
}

/// The profiling header: every routine of `shmem_h` (its prototypes and its inline
/// forms, which call the profiling names in turn) under its `pshmem_` name.
fn pshmem_h(shmem_h: &str) -> String {
    // Comments, preprocessor lines and the C++ linkage braces out; what is left is
    // declarations (to `;`) and inline definitions (to their closing brace).
    let mut code = String::new();
    let mut rest = shmem_h;
    while let Some(at) = rest.find("/*") {
        code.push_str(&rest[..at]);
        let end = rest[at..].find("*/").expect("closed comment");
        rest = &rest[at + end + 2..];
    }
    code.push_str(rest);
    let mut kept = String::new();
    let mut continued = false;
    for line in code.lines() {
        let t = line.trim();
        let directive = continued || t.starts_with('#');
        continued = directive && t.ends_with('\\');
        if !directive && t != "extern \"C\" {" && t != "}" {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    let mut items = Vec::new();
    let (mut start, mut depth) = (0, 0usize);
    for (i, c) in kept.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let item = kept[start..=i].trim();
                    if item.starts_with("static inline") {
                        items.push(item);
                    }
                    start = i + 1;
                }
            }
            ';' if depth == 0 => {
                items.push(kept[start..=i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let mut h = String::from(
        "/* pshmem.h: OpenSHMEM's profiling interface. Every routine of shmem.h under\n \
         * its name-shifted pshmem_ name: a profiling library defines shmem_X, does its\n \
         * measuring and calls pshmem_X, which is libmemchan's shmem_X. Generated by\n \
         * build.rs from shmem.h (a test keeps it current): do not edit.\n */\n\
         #ifndef MEMCHAN_PSHMEM_H\n#define MEMCHAN_PSHMEM_H\n\n#include <shmem.h>\n\n\
         #ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
    );
    for item in items {
        if routine(item).is_some() {
            let one_line: Vec<&str> = item.split_whitespace().collect();
            h.push_str(&shift(&one_line.join(" ")));
            h.push('\n');
        }
    }
    h.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
    h
}

/// The reduction `op` over Rust type `r`, as a `fn(T, T) -> T` path.
fn op_fn(op: &str, r: &str) -> String {
    let tr = if matches!(op, "and" | "or" | "xor") {
        "coll::Bits"
    } else if r.starts_with("coll::Complex") {
        "coll::Ring"
    } else {
        "coll::Arith"
    };
    format!("<{r} as {tr}>::{op}")
}

/// The AMO ops of a type: (op, extra value arguments, returns the old value).
fn amo_ops(has: u32) -> Vec<(&'static str, &'static [&'static str], bool)> {
    let mut v: Vec<(&'static str, &'static [&'static str], bool)> = Vec::new();
    if has & AMO_EXT != 0 {
        v.extend([
            ("fetch", &[][..], true),
            ("set", &["value"][..], false),
            ("swap", &["value"][..], true),
        ]);
    }
    if has & AMO_STD != 0 {
        v.extend([
            ("compare_swap", &["cond", "value"][..], true),
            ("fetch_inc", &[][..], true),
            ("inc", &[][..], false),
            ("fetch_add", &["value"][..], true),
            ("add", &["value"][..], false),
        ]);
    }
    if has & AMO_BIT != 0 {
        for op in ["and", "or", "xor"] {
            let f: &'static str = match op {
                "and" => "fetch_and",
                "or" => "fetch_or",
                _ => "fetch_xor",
            };
            v.push((f, &["value"][..], true));
            v.push((op, &["value"][..], false));
        }
    }
    v
}

/// `shmem_TYPE_atomic_OP_nbi(fetch, dest, ARGS, pe)`: the blocking operation, its
/// result stored at `fetch`.
fn amo_nbi_fun(o: &mut Out, name: String, c: &str, r: &str, cp: &str, op: &str, args: &[&str]) {
    let mut params = vec![p(cp, format!("*mut {r}"), "fetch")];
    params.extend(amo_params(c, r, cp, op, args));
    o.fun(Fun {
        c_ret: "void",
        rs_ret: "",
        name,
        params,
        body: format!("atomic::fetch_nbi(CALL, fetch, || {});", amo_call(op, r)),
    });
}

/// An atomic's parameters after any `fetch`: `dest` (const for a fetch), `args` of
/// the element type, `pe`.
fn amo_params<'a>(
    c: &str,
    r: &str,
    cp: &str,
    op: &str,
    args: &[&'a str],
) -> Vec<(String, String, &'a str)> {
    let target = if op == "fetch" {
        format!("const {cp}")
    } else {
        cp.to_string()
    };
    let mut params = vec![p(target, format!("*const {r}"), "dest")];
    for a in args {
        params.push(p(c, r, a));
    }
    params.push(p("int", "c_int", "pe"));
    params
}

/// The blocking atomic `op` on `dest` at `pe` as the Rust call that returns the old
/// value.
fn amo_call(op: &str, r: &str) -> String {
    let aop = match op {
        "fetch" => "AtomicOp::Fetch".to_string(),
        "set" => "AtomicOp::Set(value.bits())".into(),
        "swap" => "AtomicOp::Swap(value.bits())".into(),
        "compare_swap" => {
            "AtomicOp::CompareSwap { expected: cond.bits(), new: value.bits() }".into()
        }
        "fetch_inc" | "inc" => format!("AtomicOp::FetchAdd(1{r}.bits())"),
        "fetch_add" | "add" => "AtomicOp::FetchAdd(value.bits())".into(),
        "fetch_and" | "and" => "AtomicOp::FetchAnd(value.bits())".into(),
        "fetch_or" | "or" => "AtomicOp::FetchOr(value.bits())".into(),
        _ => "AtomicOp::FetchXor(value.bits())".into(),
    };
    format!("atomic::amo::<{r}>(CALL, dest, pe, {aop})")
}

#[allow(clippy::too_many_arguments)]
fn amo_fun(
    o: &mut Out,
    name: String,
    c: &str,
    r: &str,
    cp: &str,
    op: &str,
    args: &[&str],
    ret: bool,
) {
    let params = amo_params(c, r, cp, op, args);
    let call = amo_call(op, r);
    o.fun(Fun {
        c_ret: if ret { c } else { "void" },
        rs_ret: if ret { r } else { "" },
        name,
        params,
        body: if ret { call } else { format!("{call};") },
    });
}

/// The C types a generic selection names: C's own, each once (the sized and the
/// `size_t` / `ptrdiff_t` entries of the table are these same types, and a type may
/// appear once in a `_Generic`).
const GENERIC_TYPES: &[&str] = &[
    "float",
    "double",
    "longdouble",
    "char",
    "schar",
    "short",
    "int",
    "long",
    "longlong",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
    "complexf",
    "complexd",
];

/// One C11 generic interface: the macro's name (the typed functions' suffix), the
/// parameters of the form without a context, the index of the argument that selects
/// (a pointer to the element type), the families whose types it covers, whether that
/// pointer is `const`, and whether it has a context-first form.
struct Generic {
    name: String,
    args: &'static [&'static str],
    sel: usize,
    has: u32,
    /// Families a type must also have (0: none).
    also: u32,
    konst: bool,
    ctx: bool,
}

/// The table entries a C type of [`GENERIC_TYPES`] goes by: its own, then the sized
/// and `size_t` / `ptrdiff_t` names that are the same type here (LP64), which some
/// families have where the C name has not (`shmem_int32_atomic_and` for an `int`).
fn aliases(name: &str) -> &'static [&'static str] {
    match name {
        "schar" => &["schar", "int8"],
        "short" => &["short", "int16"],
        "int" => &["int", "int32"],
        "long" => &["long", "int64", "ptrdiff"],
        "uchar" => &["uchar", "uint8"],
        "ushort" => &["ushort", "uint16"],
        "uint" => &["uint", "uint32"],
        "ulong" => &["ulong", "uint64", "size"],
        "float" => &["float"],
        "double" => &["double"],
        "longdouble" => &["longdouble"],
        "char" => &["char"],
        "longlong" => &["longlong"],
        "ulonglong" => &["ulonglong"],
        "complexf" => &["complexf"],
        "complexd" => &["complexd"],
        _ => panic!("{name} is not in GENERIC_TYPES"),
    }
}

/// A generic selection's associations: for each C type with one of `g`'s families
/// (under its own name or an alias), each of `assoc`'s C types naming the typed
/// function (`shmem_` `prefix` TYPE `_` name).
fn picks(g: &Generic, prefix: &str, assoc: impl Fn(&CType) -> Vec<String>) -> Vec<String> {
    GENERIC_TYPES
        .iter()
        .filter_map(|n| {
            let own = TYPES.iter().find(|t| t.name == *n)?;
            let named = aliases(n).iter().find_map(|a| {
                TYPES
                    .iter()
                    .find(|t| t.name == *a && t.has & g.has != 0 && t.has & g.also == g.also)
            })?;
            Some((own, named))
        })
        .flat_map(|(own, named)| {
            assoc(own)
                .into_iter()
                .map(move |a| format!("{a}: shmem_{prefix}{}_{}", named.name, g.name))
        })
        .collect()
}

/// OpenSHMEM 1.5's C11 generic interfaces (`shmem_put(dest, source, nelems, pe)` and
/// `shmem_put(ctx, dest, source, nelems, pe)`, `shmem_atomic_fetch_add(dest, value,
/// pe)`, `shmem_sum_reduce(team, dest, source, n)`, `shmem_sync(team)`, ...): a macro
/// per family selecting the typed function by the type its selecting argument points
/// to, over the types of the table that have the family.
///
/// The forms with a context first are told apart by the type of the first argument
/// (`shmem_ctx_t`, a pointer to a complete struct so that `+ 0` applies to it); there
/// the selecting pointer is matched as a pointer type (`T *`, and `const T *` where
/// the parameter is const), since an unselected branch must still be valid C for
/// every call. The other families select on `*(arg)`, which drops qualifiers
/// (`volatile` ivars of older programs select as well).
fn generics(h: &mut String) {
    let gen = |name: &str, args: &'static [&'static str], sel, has, konst, ctx| Generic {
        name: name.into(),
        args,
        sel,
        has,
        also: 0,
        konst,
        ctx,
    };
    let mut fams: Vec<Generic> = Vec::new();
    for op in ["put", "get", "put_nbi", "get_nbi"] {
        fams.push(gen(
            op,
            &["dest", "source", "nelems", "pe"],
            0,
            RMA,
            false,
            true,
        ));
    }
    fams.push(gen("p", &["dest", "value", "pe"], 0, RMA, false, true));
    fams.push(gen("g", &["source", "pe"], 0, RMA, true, true));
    for op in ["iput", "iget"] {
        let args = &["dest", "source", "dst", "sst", "nelems", "pe"];
        fams.push(gen(op, args, 0, RMA, false, true));
    }
    for op in ["put_signal", "put_signal_nbi"] {
        let args = &[
            "dest", "source", "nelems", "sig_addr", "signal", "sig_op", "pe",
        ];
        fams.push(gen(op, args, 0, RMA, false, true));
    }
    let mut atomics: Vec<(&str, u32)> = Vec::new();
    atomics.extend(["fetch", "set", "swap"].map(|op| (op, AMO_EXT)));
    atomics
        .extend(["compare_swap", "fetch_inc", "inc", "fetch_add", "add"].map(|op| (op, AMO_STD)));
    atomics
        .extend(["fetch_and", "and", "fetch_or", "or", "fetch_xor", "xor"].map(|op| (op, AMO_BIT)));
    for (op, has) in atomics {
        let args: &'static [&'static str] = match op {
            "fetch" | "fetch_inc" | "inc" => &["dest", "pe"],
            "compare_swap" => &["dest", "cond", "value", "pe"],
            _ => &["dest", "value", "pe"],
        };
        let konst = op == "fetch";
        fams.push(gen(&format!("atomic_{op}"), args, 0, has, konst, true));
        if op != "set" && op.starts_with(['f', 's', 'c']) {
            // The fetching ones have an `_nbi` form: the fetch pointer first.
            let nbi: &'static [&'static str] = match op {
                "fetch" | "fetch_inc" => &["fetch", "dest", "pe"],
                "compare_swap" => &["fetch", "dest", "cond", "value", "pe"],
                _ => &["fetch", "dest", "value", "pe"],
            };
            fams.push(gen(&format!("atomic_{op}_nbi"), nbi, 1, has, konst, true));
        }
    }
    // The 1.0-era atomic names as generics (deprecated in 1.4, still in 1.5): the
    // extended three on every type with the old names, the rest on the integer ones.
    for (op, args) in [
        ("fetch", &["dest", "pe"][..]),
        ("set", &["dest", "value", "pe"][..]),
        ("swap", &["dest", "value", "pe"][..]),
        ("cswap", &["dest", "cond", "value", "pe"][..]),
        ("finc", &["dest", "pe"][..]),
        ("inc", &["dest", "pe"][..]),
        ("fadd", &["dest", "value", "pe"][..]),
        ("add", &["dest", "value", "pe"][..]),
    ] {
        let also = if matches!(op, "fetch" | "set" | "swap") {
            0
        } else {
            AMO_STD
        };
        fams.push(Generic {
            also,
            ..gen(op, args, 0, AMO_OLD, false, false)
        });
    }
    for op in ["wait_until", "test"] {
        fams.push(gen(
            op,
            &["ivar", "cmp", "cmp_value"],
            0,
            WAIT,
            false,
            false,
        ));
    }
    for kind in ["wait_until", "test"] {
        for mode in ["all", "any", "some"] {
            for vector in [false, true] {
                let args: &'static [&'static str] = match (mode, vector) {
                    ("some", false) => {
                        &["ivars", "nelems", "indices", "status", "cmp", "cmp_value"]
                    }
                    ("some", true) => {
                        &["ivars", "nelems", "indices", "status", "cmp", "cmp_values"]
                    }
                    (_, false) => &["ivars", "nelems", "status", "cmp", "cmp_value"],
                    (_, true) => &["ivars", "nelems", "status", "cmp", "cmp_values"],
                };
                let v = if vector { "_vector" } else { "" };
                fams.push(gen(
                    &format!("{kind}_{mode}{v}"),
                    args,
                    0,
                    WAIT,
                    false,
                    false,
                ));
            }
        }
    }
    for op in ["sum", "prod", "min", "max"] {
        let has = if matches!(op, "sum" | "prod") {
            RED | CPLX
        } else {
            RED
        };
        let args = &["team", "dest", "source", "nreduce"];
        fams.push(gen(&format!("{op}_reduce"), args, 1, has, false, false));
    }
    for op in ["and", "or", "xor"] {
        let args = &["team", "dest", "source", "nreduce"];
        fams.push(gen(&format!("{op}_reduce"), args, 1, RED_BIT, false, false));
    }
    fams.push(gen(
        "broadcast",
        &["team", "dest", "source", "nelems", "PE_root"],
        1,
        RMA,
        false,
        false,
    ));
    for op in ["collect", "fcollect", "alltoall"] {
        fams.push(gen(
            op,
            &["team", "dest", "source", "nelems"],
            1,
            RMA,
            false,
            false,
        ));
    }
    fams.push(gen(
        "alltoalls",
        &["team", "dest", "source", "dst", "sst", "nelems"],
        1,
        RMA,
        false,
        false,
    ));
    let _ = writeln!(
        h,
        "\n/* C11 generic interfaces (OpenSHMEM 1.5): each picks the typed function by the type its\n   \
         selecting argument points to (dest; source for g; ivar(s) for wait_until/test); the RMA,\n   \
         signal and atomic ones also take a context first. */\n\
         #if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)\n\
         #define MEMCHAN_ARG0(...) MEMCHAN_ARG0_(__VA_ARGS__, 0)\n\
         #define MEMCHAN_ARG0_(a, ...) a\n\
         #define MEMCHAN_ARG1(...) MEMCHAN_ARG1_(__VA_ARGS__, 0, 0)\n\
         #define MEMCHAN_ARG1_(a, b, ...) b\n\
         #define MEMCHAN_ARG2(...) MEMCHAN_ARG2_(__VA_ARGS__, 0, 0, 0)\n\
         #define MEMCHAN_ARG2_(a, b, c, ...) c\n\
         /* Selected when no typed function fits: its call then fails to compile. */\n\
         static inline void memchan_no_generic_match(void) {{ }}\n\
         #define shmem_sync(...) _Generic((MEMCHAN_ARG0(__VA_ARGS__)) + 0, shmem_team_t: shmem_team_sync, default: shmem_sync)(__VA_ARGS__)"
    );
    for g in fams {
        if g.ctx {
            let assoc = |t: &CType| {
                let mut a = vec![format!("{} *", t.c)];
                if g.konst {
                    a.push(format!("const {} *", t.c));
                }
                a
            };
            let with_ctx = picks(&g, "ctx_", assoc);
            let plain = picks(&g, "", assoc);
            let _ = writeln!(
                h,
                "#define shmem_{}(...) _Generic((MEMCHAN_ARG0(__VA_ARGS__)) + 0, \
                 shmem_ctx_t: _Generic((MEMCHAN_ARG{}(__VA_ARGS__)) + 0, {}, default: memchan_no_generic_match), \
                 default: _Generic((MEMCHAN_ARG{}(__VA_ARGS__)) + 0, {}, default: memchan_no_generic_match))(__VA_ARGS__)",
                g.name,
                g.sel + 1,
                with_ctx.join(", "),
                g.sel,
                plain.join(", ")
            );
        } else {
            let list = g.args.join(", ");
            let plain = picks(&g, "", |t| vec![t.c.to_string()]);
            let _ = writeln!(
                h,
                "#define shmem_{}({list}) _Generic(*({}), {})({list})",
                g.name,
                g.args[g.sel],
                plain.join(", ")
            );
        }
    }
    let _ = writeln!(h, "#endif");
}
