//! The control plane's own tests: refusals of a hostile or squatted control block,
//! isolation.

use crate::Node;
use memchan_core::transport::Transport;
use memchan_core::{Config, Error};
use std::os::unix::fs::{MetadataExt, PermissionsExt};

fn cluster(tag: &str) -> String {
    format!("ctl-{tag}-{}", std::process::id())
}

fn ctl_path(name: &str) -> String {
    format!("/dev/shm/memchan.{name}.ctl")
}

#[test]
fn an_isolated_node_cannot_map_a_segment() {
    // Defect 10 of the 4c63486 probe: an isolated node's map_rx returned Ok.
    let name = cluster("isomap");
    let a = Node::join(&name, &Config::default()).unwrap();
    let b = Node::join(&name, &Config::default()).unwrap();
    use memchan_core::transport::SegmentOps;
    let seg = b.segment("s", 4096, 0o600).unwrap();
    a.inner
        .declare_failed(b.node_id(), b.inner.local.incarnation);
    assert!(!a.members().contains(b.node_id()));
    assert!(
        matches!(
            seg.map_rx_with(memchan_core::RxAttrs::default()),
            Err(Error::Isolated { .. })
        ),
        "map_rx of an isolated node"
    );
    assert!(matches!(
        seg.map_tx(
            memchan_core::Dest::Broadcast,
            memchan_core::TxAttrs::default()
        ),
        Err(Error::Isolated { .. })
    ));
    assert!(matches!(
        b.segment("t", 4096, 0o600),
        Err(Error::Isolated { .. })
    ));
}

fn refused(r: memchan_core::Result<Node>, why: &str) {
    match r {
        Err(Error::Invalid {
            what: "control block",
            why: w,
        }) => assert!(w.contains(why), "{w}"),
        Err(e) => panic!("expected a refused control block ({why}), got {e}"),
        Ok(_) => panic!("joined through a control block that must be refused ({why})"),
    }
}

#[test]
fn a_new_cluster_and_its_lock_pages_are_owner_only() {
    let name = cluster("mode");
    let a = Node::join(&name, &Config::default()).unwrap();
    let _lock = a.lock("L").unwrap();
    let mut seen = 0;
    for e in std::fs::read_dir("/dev/shm").unwrap() {
        let e = e.unwrap();
        if e.file_name()
            .to_string_lossy()
            .starts_with(&format!("memchan.{name}."))
        {
            let mode = e.metadata().unwrap().permissions().mode() & 0o7777;
            assert_eq!(mode, 0o600, "{:?}", e.file_name());
            seen += 1;
        }
    }
    assert!(
        seen >= 2,
        "control block and the lock page's receive memory"
    );
}

#[test]
fn a_symlinked_control_block_is_refused_and_its_target_untouched() {
    let name = cluster("link");
    let target = std::env::temp_dir().join(format!("memchan-link-target-{name}"));
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    std::os::unix::fs::symlink(&target, ctl_path(&name)).unwrap();
    let r = Node::join(&name, &Config::default());
    let _ = std::fs::remove_file(ctl_path(&name));
    refused(r, "symbolic link");
    let after = std::fs::read(&target).unwrap();
    let _ = std::fs::remove_file(&target);
    assert!(
        after.iter().all(|&b| b == 0),
        "the link's target was written"
    );
}

#[test]
fn a_control_block_squatted_by_another_uid_is_refused() {
    // Root-only: fails loudly rather than passing without having run.
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "needs root to chown the squatted file"
    );
    let name = cluster("squat");
    let path = ctl_path(&name);
    std::fs::write(&path, vec![0u8; 1 << 20]).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    let r = Node::join(&name, &Config::default());
    let after = std::fs::read(&path).unwrap();
    let owner = std::fs::metadata(&path).unwrap().uid();
    let _ = std::fs::remove_file(&path);
    refused(r, "owned by uid 65534");
    assert_eq!(owner, 65534);
    assert!(
        after.iter().all(|&b| b == 0),
        "the squatted file was written"
    );
}

#[test]
fn a_control_block_wider_than_agreed_is_refused() {
    let name = cluster("wide");
    let shared = Config::default().with_shm_mode(0o666);
    let a = Node::join(&name, &shared).unwrap();
    let mode = std::fs::metadata(ctl_path(&name)).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o666);
    refused(Node::join(&name, &Config::default()), "wider");
    let b = Node::join(&name, &shared).unwrap();
    assert_ne!(a.node_id(), b.node_id());
}

#[test]
fn another_uid_cannot_open_a_default_control_block() {
    // Root-only: fails loudly rather than passing without having run.
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "needs root to run a child as uid 65534"
    );
    use std::os::unix::process::CommandExt;
    let name = cluster("dac");
    let _a = Node::join(&name, &Config::default()).unwrap();
    // What attacks b1-c6 start with: open the control block for writing.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec 3<>{}", ctl_path(&name)))
        .uid(65534)
        .gid(65534)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "uid 65534 opened the control block");
}
