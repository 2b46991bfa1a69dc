//! Teams (OpenSHMEM 1.5 §9.4) and the team a context belongs to.
//!
//! A team is a [`Set`] of world ranks (an arithmetic progression: a strided split of
//! a strided team is one again) and a pSync block of its own in the library area
//! ([`sys`]). `SHMEM_TEAM_WORLD` and `SHMEM_TEAM_SHARED` are values 1 and 2 and use
//! block 0; a team split from them takes one of the [`SLOTS`] other blocks, and its
//! handle is the block's number plus [`FIRST_SPLIT`] - 1, the same value on every
//! member.
//!
//! **Agreeing on a block.** A split is collective over the parent team: after a
//! barrier each parent member writes the mask of the blocks it has free into word
//! `rank` of every member's scratch words ([`sys::SCRATCH`]), and after a second
//! barrier every member ANDs the parent's masks and takes the lowest block left. All
//! members compute the same block, and it is free on each of them; the new teams of
//! one split are disjoint, so they may share it. A member reads the masks before it
//! enters any later collective, and nobody writes its scratch words before it has
//! entered one, so the words are never overwritten while read.
//!
//! **Bad handles.** `SHMEM_TEAM_INVALID` and a destroyed team's handle are refused
//! without ending the program: the calls that return a status return -1
//! (`shmem_team_ptr` NULL) and do nothing else. A value no handle can have (a stray
//! pointer) ends the PE naming the call, as other bad arguments do.

use super::set::{barrier, deposit, Set};
use super::{atomic, sys, Team};
use crate::{die, with_pe, Handles, Pe};
use std::ffi::{c_int, c_long, c_void};

/// `SHMEM_TEAM_WORLD` and `SHMEM_TEAM_SHARED` as the header spells them.
pub const TEAM_WORLD: usize = 1;
pub const TEAM_SHARED: usize = 2;
/// The handle of the team in block 1.
const FIRST_SPLIT: usize = 3;
/// Blocks for split teams (1..=SLOTS): a PE is in at most this many at once.
pub const SLOTS: usize = 63;
/// `SHMEM_TEAM_NUM_CONTEXTS`: the config mask bit of `num_contexts`.
const NUM_CONTEXTS: c_long = 1;

/// `shmem_team_config_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Config {
    pub num_contexts: c_int,
}

/// A split team this PE belongs to.
#[derive(Debug, Clone, Copy)]
struct Split {
    set: Set,
    config: Config,
}

/// The split teams of this PE, by block (index 0 is block 1).
#[derive(Debug)]
pub struct Table([Option<Split>; SLOTS]);

impl Default for Table {
    fn default() -> Table {
        Table([None; SLOTS])
    }
}

impl Table {
    /// Bit `b` set for every free block `b` (1..=SLOTS).
    fn free_mask(&self) -> u64 {
        (0..SLOTS)
            .filter(|&i| self.0[i].is_none())
            .fold(0, |m, i| m | 1 << (i + 1))
    }
}

/// A team as the collectives use it: its members and its pSync's heap offset.
pub struct Resolved {
    pub set: Set,
    pub psync: usize,
    config: Config,
}

fn teams(p: &Pe) -> std::sync::MutexGuard<'_, Table> {
    p.teams.lock().unwrap_or_else(|e| e.into_inner())
}

/// The team `team` names on this PE; `None` for SHMEM_TEAM_INVALID and for a split
/// team's handle that names no team here (destroyed, or never split); the end
/// naming `call` for a value no team handle can have (a stray pointer).
pub fn resolve(call: &str, p: &Pe, team: Team) -> Option<Resolved> {
    let world = Set::new(0, 1, p.pes.len());
    let (set, block, config) = match team as usize {
        TEAM_WORLD => (world, 0, Config::default()),
        TEAM_SHARED => (p.shared, 0, Config::default()),
        0 => return None,
        h => {
            let Some(block) = h
                .checked_sub(FIRST_SPLIT - 1)
                .filter(|b| (1..=SLOTS).contains(b))
            else {
                die(call, format!("{team:p} is not a team"))
            };
            let s = teams(p).0[block - 1]?;
            (s.set, block, s.config)
        }
    };
    Some(Resolved {
        set,
        psync: p.sys + sys::PSYNC + block * sys::PSYNC_BLOCK,
        config,
    })
}

/// The calling PE's number in `team`; -1 for a handle that is no team.
#[no_mangle]
pub extern "C" fn shmem_team_my_pe(team: Team) -> c_int {
    const CALL: &str = "shmem_team_my_pe";
    with_pe(CALL, |p| {
        resolve(CALL, p, team)
            .and_then(|t| t.set.index_of(p.me))
            .map_or(-1, |i| i as c_int)
    })
}

/// The number of PEs in `team`; -1 for a handle that is no team.
#[no_mangle]
pub extern "C" fn shmem_team_n_pes(team: Team) -> c_int {
    const CALL: &str = "shmem_team_n_pes";
    with_pe(CALL, |p| {
        resolve(CALL, p, team).map_or(-1, |t| t.set.len() as c_int)
    })
}

/// `src_pe` of `src_team` as a PE of `dest_team`; -1 if it is not in it (or either
/// handle is no team).
#[no_mangle]
pub extern "C" fn shmem_team_translate_pe(src_team: Team, src_pe: c_int, dest_team: Team) -> c_int {
    const CALL: &str = "shmem_team_translate_pe";
    with_pe(CALL, |p| {
        let (Some(src), Some(dest)) = (resolve(CALL, p, src_team), resolve(CALL, p, dest_team))
        else {
            return -1;
        };
        usize::try_from(src_pe)
            .ok()
            .and_then(|i| src.set.get(i))
            .and_then(|world| dest.set.index_of(world))
            .map_or(-1, |i| i as c_int)
    })
}

/// The team's configuration (`num_contexts` under `SHMEM_TEAM_NUM_CONTEXTS`); -1
/// for a handle that is no team.
///
/// # Safety
/// `config` is NULL (then only the status is returned) or a writable
/// `shmem_team_config_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_team_get_config(
    team: Team,
    mask: c_long,
    config: *mut Config,
) -> c_int {
    const CALL: &str = "shmem_team_get_config";
    let Some(t) = with_pe(CALL, |p| resolve(CALL, p, team)) else {
        return -1;
    };
    if !config.is_null() && mask & NUM_CONTEXTS != 0 {
        // SAFETY: the caller's contract; non-null checked.
        unsafe { (*config).num_contexts = t.config.num_contexts };
    }
    0
}

/// A pointer through which this PE loads and stores `dest` of `team`'s PE `pe`, or
/// NULL (no such team or PE, or that PE's memory is not mapped here).
#[no_mangle]
pub extern "C" fn shmem_team_ptr(team: Team, dest: *const c_void, pe: c_int) -> *mut c_void {
    const CALL: &str = "shmem_team_ptr";
    let world = with_pe(CALL, |p| {
        let t = resolve(CALL, p, team)?;
        t.set.get(usize::try_from(pe).ok()?)
    });
    match world {
        Some(w) => super::misc::shmem_ptr(dest, w as c_int),
        None => std::ptr::null_mut(),
    }
}

/// Ends this PE's membership of a split team (its block is free again); the
/// predefined teams and values that name no team are left alone.
#[no_mangle]
pub extern "C" fn shmem_team_destroy(team: Team) {
    with_pe("shmem_team_destroy", |p| {
        if let Some(block) = (team as usize)
            .checked_sub(FIRST_SPLIT - 1)
            .filter(|b| (1..=SLOTS).contains(b))
        {
            teams(p).0[block - 1] = None;
        }
    })
}

/// The new team's handle for this PE, after the parent's members agreed on a block
/// (the collective part of every split): `members` is this PE's new team (`None`
/// when it is in none); SHMEM_TEAM_INVALID when it is in none or no block is free
/// on every parent member (then the second of the pair is false on every member).
fn split(
    call: &str,
    p: &mut Handles,
    parent: &Resolved,
    members: Option<Set>,
    config: Config,
) -> (Team, bool) {
    let scratch = p.sys + sys::SCRATCH;
    let slot = move |r: usize| scratch + 8 * r;
    barrier(call, p, &parent.set, parent.psync);
    let mask = teams(p).free_mask().to_ne_bytes();
    let me = p.me;
    for m in parent.set.members() {
        deposit(call, p, m, slot(me), &mask);
    }
    barrier(call, p, &parent.set, parent.psync);
    let free = parent.set.members().fold(u64::MAX, |acc, m| {
        // SAFETY: the scratch words are 8-aligned words of this PE's heap mapping.
        acc & unsafe { atomic::load::<u64>(p.base + slot(m)) }
    }) & !1;
    if free == 0 {
        return (std::ptr::null(), false);
    }
    let block = free.trailing_zeros() as usize;
    let Some(set) = members else {
        return (std::ptr::null(), true);
    };
    teams(p).0[block - 1] = Some(Split { set, config });
    ((block + FIRST_SPLIT - 1) as Team, true)
}

/// The configuration a split asked for.
///
/// # Safety
/// `config` is NULL or a readable `shmem_team_config_t`.
unsafe fn asked(config: *const Config, mask: c_long) -> Config {
    if config.is_null() || mask & NUM_CONTEXTS == 0 {
        return Config::default();
    }
    // SAFETY: the caller's contract; non-null checked.
    let n = unsafe { (*config).num_contexts };
    Config {
        num_contexts: n.max(0),
    }
}

/// The members `start + i * stride` (`i < size`) of `parent`, as world ranks;
/// `None` if any is outside it or two coincide.
fn strided(parent: &Set, start: c_int, stride: c_int, size: c_int) -> Option<Set> {
    let (start, size) = (usize::try_from(start).ok()?, usize::try_from(size).ok()?);
    parent.sub(start, stride as isize, size)
}

/// Writes `team` to `out` if `out` is not NULL.
///
/// # Safety
/// `out` is NULL or a writable `shmem_team_t`.
unsafe fn give(out: *mut Team, team: Team) {
    if !out.is_null() {
        // SAFETY: the caller's contract; non-null checked.
        unsafe { out.write(team) };
    }
}

/// A team of `size` PEs of `parent`, from its PE `start` at `stride` (which may be
/// negative, or 0 for one PE). 0 when every parent member took part, with
/// `*new_team` SHMEM_TEAM_INVALID on the PEs outside the new team; -1 (and
/// SHMEM_TEAM_INVALID) when the parent is no team, the arguments leave it, or no
/// team block is free.
///
/// # Safety
/// `config` is NULL or a readable `shmem_team_config_t`; `new_team` is NULL or a
/// writable `shmem_team_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_team_split_strided(
    parent: Team,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const Config,
    mask: c_long,
    new_team: *mut Team,
) -> c_int {
    const CALL: &str = "shmem_team_split_strided";
    // SAFETY: the caller's contract.
    let config = unsafe { asked(config, mask) };
    let (team, ok) = with_pe(CALL, |p| {
        let Some(parent) = resolve(CALL, p, parent) else {
            return (std::ptr::null(), false);
        };
        // The same arguments on every member: each refuses alike, with no exchange.
        let Some(set) = strided(&parent.set, start, stride, size) else {
            return (std::ptr::null(), false);
        };
        let mine = set.index_of(p.me).map(|_| set);
        split(CALL, p, &parent, mine, config)
    });
    // SAFETY: the caller's contract.
    unsafe { give(new_team, team) };
    if ok {
        0
    } else {
        -1
    }
}

/// Splits `parent` into a grid of `xrange` columns: each PE's row (its x-axis
/// team: parent PEs `k * xrange ..` up to `xrange` of them) and its column (its
/// y-axis team: the parent PEs with its index modulo `xrange`). 0, or -1 (and
/// SHMEM_TEAM_INVALID in both) for a parent that is no team, `xrange < 1`, or no
/// free team block.
///
/// # Safety
/// The configs are NULL or readable; the team pointers are NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shmem_team_split_2d(
    parent: Team,
    xrange: c_int,
    xconfig: *const Config,
    xmask: c_long,
    xteam: *mut Team,
    yconfig: *const Config,
    ymask: c_long,
    yteam: *mut Team,
) -> c_int {
    const CALL: &str = "shmem_team_split_2d";
    // SAFETY: the caller's contract.
    let (xc, yc) = unsafe { (asked(xconfig, xmask), asked(yconfig, ymask)) };
    let (x, y, ok) = with_pe(CALL, |p| {
        let invalid = (std::ptr::null(), std::ptr::null(), false);
        let Some(parent) = resolve(CALL, p, parent) else {
            return invalid;
        };
        let Ok(xr) = usize::try_from(xrange) else {
            return invalid;
        };
        if xr == 0 {
            return invalid;
        }
        let n = parent.set.len();
        let xr = xr.min(n);
        let Some(i) = parent.set.index_of(p.me) else {
            return invalid;
        };
        let (row, col) = (i / xr, i % xr);
        let row_len = xr.min(n - row * xr);
        let col_len = (n - col).div_ceil(xr);
        let xs = parent.set.sub(row * xr, 1, row_len);
        let ys = parent.set.sub(col, xr as isize, col_len);
        let (x, xok) = split(CALL, p, &parent, xs, xc);
        let (y, yok) = split(CALL, p, &parent, ys, yc);
        (x, y, xok && yok)
    });
    // SAFETY: the caller's contract.
    unsafe {
        give(xteam, x);
        give(yteam, y);
    }
    if ok {
        0
    } else {
        -1
    }
}

/// `shmem_ctx_t` values: SHMEM_CTX_DEFAULT is NULL, SHMEM_CTX_INVALID is -1, and a
/// context created on a team is twice the team's handle (every context orders and
/// completes with the default one, so the value carries nothing else).
fn ctx_of(team: Team) -> *mut c_void {
    (team as usize * 2) as *mut c_void
}

/// Writes `ctx`, naming `call` if it is NULL.
///
/// # Safety
/// `out` is NULL or a writable `shmem_ctx_t`.
unsafe fn give_ctx(call: &str, out: *mut *mut c_void, ctx: *mut c_void) {
    if out.is_null() {
        die(call, "ctx is NULL");
    }
    // SAFETY: the caller's contract; non-null checked.
    unsafe { out.write(ctx) };
}

/// A context on SHMEM_TEAM_WORLD; 0.
///
/// # Safety
/// `ctx` is a writable `shmem_ctx_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_ctx_create(_options: c_long, ctx: *mut *mut c_void) -> c_int {
    with_pe("shmem_ctx_create", |_| ());
    // SAFETY: the caller's contract.
    unsafe { give_ctx("shmem_ctx_create", ctx, ctx_of(TEAM_WORLD as Team)) };
    0
}

/// A context on `team`; 0, or -1 and SHMEM_CTX_INVALID for a handle that is no team.
///
/// # Safety
/// `ctx` is a writable `shmem_ctx_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_team_create_ctx(
    team: Team,
    _options: c_long,
    ctx: *mut *mut c_void,
) -> c_int {
    const CALL: &str = "shmem_team_create_ctx";
    let ok = with_pe(CALL, |p| resolve(CALL, p, team).is_some());
    let made = if ok {
        ctx_of(team)
    } else {
        usize::MAX as *mut c_void
    };
    // SAFETY: the caller's contract.
    unsafe { give_ctx(CALL, ctx, made) };
    if ok {
        0
    } else {
        -1
    }
}

/// The team `ctx` was created on (SHMEM_TEAM_WORLD for the default context); 0, or
/// -1 and SHMEM_TEAM_INVALID for SHMEM_CTX_INVALID or a context whose team is gone.
///
/// # Safety
/// `team` is NULL or a writable `shmem_team_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_ctx_get_team(ctx: *mut c_void, team: *mut Team) -> c_int {
    const CALL: &str = "shmem_ctx_get_team";
    let v = ctx as usize;
    let named = match v {
        0 => Some(TEAM_WORLD as Team),
        _ if v.is_multiple_of(2) => Some((v / 2) as Team),
        _ => None,
    };
    let found = named.filter(|&t| with_pe(CALL, |p| resolve(CALL, p, t).is_some()));
    // SAFETY: the caller's contract.
    unsafe { give(team, found.unwrap_or(std::ptr::null())) };
    if found.is_some() {
        0
    } else {
        -1
    }
}

/// Contexts hold nothing of their own.
#[no_mangle]
pub extern "C" fn shmem_ctx_destroy(_ctx: *mut c_void) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_subsets_stay_inside_the_parent() {
        let world = Set::new(0, 1, 8);
        let s = strided(&world, 1, 2, 4).expect("1,3,5,7");
        assert_eq!(s.members().collect::<Vec<_>>(), [1, 3, 5, 7]);
        let back = strided(&world, 7, -3, 3).expect("7,4,1");
        assert_eq!(back.members().collect::<Vec<_>>(), [7, 4, 1]);
        assert_eq!(back.index_of(4), Some(1));
        assert_eq!(back.index_of(3), None);
        let one = strided(&world, 5, 0, 1).expect("a stride of 0 for one PE");
        assert_eq!(one.members().collect::<Vec<_>>(), [5]);
        for (start, stride, size) in [
            (0, 2, 5),
            (8, 1, 1),
            (-1, 1, 1),
            (0, 0, 2),
            (2, -1, 4),
            (0, 1, 0),
        ] {
            assert!(
                strided(&world, start, stride, size).is_none(),
                "{start},{stride},{size}"
            );
        }
        // A split of a split is strided in world ranks.
        let odd = strided(&world, 1, 2, 4).expect("odd");
        let sub = strided(&odd, 3, -2, 2).expect("7, 3");
        assert_eq!(sub.members().collect::<Vec<_>>(), [7, 3]);
    }

    #[test]
    fn free_blocks_exclude_taken_ones() {
        let mut t = Table::default();
        assert_eq!(t.free_mask(), !1);
        t.0[0] = Some(Split {
            set: Set::new(0, 1, 1),
            config: Config::default(),
        });
        assert_eq!(t.free_mask().trailing_zeros(), 2);
    }
}
