//! The TUN device: `/dev/net/tun` opened with `TUNSETIFF` (`IFF_TUN | IFF_NO_PI |
//! IFF_VNET_HDR`: IP packets with no packet-information prefix, each behind a
//! 10-byte `virtio_net_hdr`) and `TUNSETOFFLOAD(TUN_F_CSUM)`, so the kernel hands
//! out TCP and UDP packets with their checksum not yet computed (the header says
//! where it goes) and takes them back so, as a veth does: no software checksum on
//! either side (measured: `csum_partial` was 7% of a stream's samples, 5-13% more
//! iperf3 bandwidth without it). Then the interface's MTU, IPv4
//! address, netmask and up flag set with the classic `SIOCSIF*` ioctls on a datagram
//! socket. No crate here: the few ioctls are all the device needs, and the TUN crates
//! bring async runtimes this blocking design does not use.

use std::ffi::CStr;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::IpError;

/// Bytes of the `virtio_net_hdr` before every packet read or written.
pub const VNET_HDR: usize = 10;

/// `virtio_net_hdr` flags: the checksum is still to be computed
/// (`csum_start`/`csum_offset` say where), or was checked already.
const NEEDS_CSUM: u8 = 1;
const DATA_VALID: u8 = 2;

/// Whether `hdr` is a `virtio_net_hdr` an honest sender's kernel hands out on a
/// TUN device with checksum offload only, before a packet of `pkt_len` bytes: known
/// flags, no segmentation (this device never asks for it, so no frame carries it),
/// and a checksum place inside the packet. Another node wrote it: what the kernel
/// is given is only what this allows (the segmentation paths are the kernel's most
/// delicate `virtio_net_hdr` code, and no honest frame needs them).
pub fn vnet_hdr_ok(hdr: &[u8; VNET_HDR], pkt_len: usize) -> bool {
    let u16_at = |i: usize| usize::from(u16::from_ne_bytes([hdr[i], hdr[i + 1]]));
    let (flags, gso_type) = (hdr[0], hdr[1]);
    let (hdr_len, gso_size) = (u16_at(2), u16_at(4));
    let (csum_start, csum_offset) = (u16_at(6), u16_at(8));
    flags & !(NEEDS_CSUM | DATA_VALID) == 0
        && gso_type == 0
        && gso_size == 0
        && hdr_len <= pkt_len
        && (flags & NEEDS_CSUM == 0 || csum_start + csum_offset + 2 <= pkt_len)
}

/// An open TUN interface. Frames (a `virtio_net_hdr`, then the packet) are read and
/// written whole, one per system call.
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
}

/// An `ifreq` naming `name`, its union zeroed.
fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: `ifreq` is plain data (a name array and a union of plain data); all
    // zeroes is a valid value of every field.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    r
}

fn sockaddr_in(a: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(a).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `sockaddr_in` and `sockaddr` are both 16 bytes of plain data; the
    // kernel reads the former through the latter, as C does.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

impl Tun {
    /// Creates (or attaches to) the TUN interface `name` and configures it: `mtu`,
    /// address `addr` with `prefix` bits of netmask, up. The kernel adds the route
    /// to the subnet.
    ///
    /// # Errors
    /// [`IpError::NoTunDevice`] without `/dev/net/tun`, [`IpError::NotPermitted`]
    /// without CAP_NET_ADMIN, [`IpError::Invalid`] for a bad name, [`IpError::Os`]
    /// for any other refusal, naming the step.
    pub fn open(name: &str, mtu: u32, addr: Ipv4Addr, prefix: u8) -> Result<Tun, IpError> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(['/', ' ', '\0']) {
            return Err(IpError::Invalid {
                what: "interface name",
                why: format!("`{name}`: 1..15 characters, no '/', space or NUL"),
            });
        }
        let path = c"/dev/net/tun";
        // SAFETY: a NUL-terminated path; the returned descriptor is owned below.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::ENXIO) => IpError::NoTunDevice,
                Some(libc::EACCES) | Some(libc::EPERM) => {
                    IpError::NotPermitted("open /dev/net/tun")
                }
                _ => IpError::Os {
                    what: "open /dev/net/tun",
                    source: e,
                },
            });
        }
        // SAFETY: `fd` was just returned by open(2) and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = ifreq(name);
        req.ifr_ifru.ifru_flags =
            (libc::IFF_TUN | libc::IFF_NO_PI | libc::IFF_VNET_HDR) as libc::c_short;
        // SAFETY: TUNSETIFF reads and writes one `ifreq`, which lives across the call.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req) };
        if r < 0 {
            return Err(os_or_perm("TUNSETIFF", io::Error::last_os_error()));
        }
        // SAFETY: the kernel wrote a NUL-terminated name of at most IFNAMSIZ bytes.
        let got = unsafe { CStr::from_ptr(req.ifr_name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: TUNSETOFFLOAD takes its flags as the integer argument itself.
        let r = unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                libc::TUNSETOFFLOAD,
                libc::TUN_F_CSUM as libc::c_ulong,
            )
        };
        if r < 0 {
            return Err(os_or_perm("TUNSETOFFLOAD", io::Error::last_os_error()));
        }
        let tun = Tun { fd, name: got };
        tun.configure(mtu, addr, prefix)?;
        Ok(tun)
    }

    fn configure(&self, mtu: u32, addr: Ipv4Addr, prefix: u8) -> Result<(), IpError> {
        // SAFETY: socket(2) with constant arguments; the descriptor is owned below.
        let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if s < 0 {
            return Err(IpError::Os {
                what: "socket for interface ioctls",
                source: io::Error::last_os_error(),
            });
        }
        // SAFETY: `s` was just returned by socket(2) and is owned by nothing else.
        let s = unsafe { OwnedFd::from_raw_fd(s) };
        let sioc = |what: &'static str, req: libc::c_ulong, r: &mut libc::ifreq| {
            // SAFETY: every SIOC[GS]IF* request used here reads or writes one
            // `ifreq`, which lives across the call.
            let rc = unsafe { libc::ioctl(s.as_raw_fd(), req as _, r as *mut libc::ifreq) };
            if rc < 0 {
                Err(os_or_perm(what, io::Error::last_os_error()))
            } else {
                Ok(())
            }
        };
        let mut r = ifreq(&self.name);
        r.ifr_ifru.ifru_mtu = mtu as libc::c_int;
        sioc("SIOCSIFMTU", libc::SIOCSIFMTU, &mut r)?;
        let mut r = ifreq(&self.name);
        r.ifr_ifru.ifru_addr = sockaddr_in(addr);
        sioc("SIOCSIFADDR", libc::SIOCSIFADDR, &mut r)?;
        let mask = if prefix == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(prefix))
        };
        let mut r = ifreq(&self.name);
        r.ifr_ifru.ifru_netmask = sockaddr_in(Ipv4Addr::from(mask));
        sioc("SIOCSIFNETMASK", libc::SIOCSIFNETMASK, &mut r)?;
        let mut r = ifreq(&self.name);
        sioc("SIOCGIFFLAGS", libc::SIOCGIFFLAGS, &mut r)?;
        // SAFETY: SIOCGIFFLAGS filled `ifru_flags`.
        let flags = unsafe { r.ifr_ifru.ifru_flags };
        r.ifr_ifru.ifru_flags = flags | (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        sioc("SIOCSIFFLAGS", libc::SIOCSIFFLAGS, &mut r)
    }

    /// The interface's name as the kernel gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one frame into `buf`; `Ok(None)` when none is waiting (the descriptor is
    /// non-blocking once [`set_nonblocking`](Self::set_nonblocking) ran).
    ///
    /// # Errors
    /// The read's OS error.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is writable for `buf.len()` bytes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => Ok(None),
            io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Hands one frame to the kernel: the header `hdr` (a copy this process owns and
    /// checked) and the packet of `len` bytes at `pkt`, in one `writev`.
    ///
    /// # Safety
    /// `pkt..pkt+len` must stay mapped for the call. The bytes may change under the
    /// call (another process's memory): the kernel copies them once
    /// (`copy_from_user`) and parses its copy, and no Rust reference to them exists.
    pub unsafe fn write_frame(
        &self,
        hdr: &[u8; VNET_HDR],
        pkt: *const u8,
        len: usize,
    ) -> io::Result<()> {
        let iov = [
            libc::iovec {
                iov_base: hdr.as_ptr() as *mut libc::c_void,
                iov_len: VNET_HDR,
            },
            libc::iovec {
                iov_base: pkt as *mut libc::c_void,
                iov_len: len,
            },
        ];
        // SAFETY: both ranges stay mapped for the call (`hdr` is borrowed, `pkt` is
        // the caller's promise); writev(2) only reads them.
        let n = unsafe { libc::writev(self.fd.as_raw_fd(), iov.as_ptr(), 2) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Makes reads non-blocking (the transmit loop polls, then sleeps in `poll`).
    ///
    /// # Errors
    /// The `fcntl` error.
    pub fn set_nonblocking(&self) -> io::Result<()> {
        let fd = self.fd.as_raw_fd();
        // SAFETY: F_GETFL / F_SETFL on a descriptor we own.
        let ok = unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFL);
            fl >= 0 && libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) >= 0
        };
        if ok {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Sleeps until a packet can be read or `timeout_ms` passes.
    pub fn poll_readable(&self, timeout_ms: i32) {
        let mut p = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the call's duration.
        unsafe { libc::poll(&mut p, 1, timeout_ms) };
    }
}

fn os_or_perm(what: &'static str, e: io::Error) -> IpError {
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => IpError::NotPermitted(what),
        _ => IpError::Os { what, source: e },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(flags: u8, gso: u8, hdr_len: u16, gso_size: u16, start: u16, off: u16) -> [u8; 10] {
        let mut h = [flags, gso, 0, 0, 0, 0, 0, 0, 0, 0];
        for (i, v) in [(2, hdr_len), (4, gso_size), (6, start), (8, off)] {
            h[i..i + 2].copy_from_slice(&v.to_ne_bytes());
        }
        h
    }

    #[test]
    fn only_headers_an_honest_kernel_hands_out_pass() {
        // A TCP segment with its checksum to do (IPv4 20 + TCP 20 + 8 bytes).
        assert!(vnet_hdr_ok(&hdr(NEEDS_CSUM, 0, 0, 0, 20, 16), 48));
        assert!(vnet_hdr_ok(&hdr(0, 0, 0, 0, 0, 0), 28));
        assert!(vnet_hdr_ok(&hdr(DATA_VALID, 0, 0, 0, 0, 0), 28));
        // The checksum's place past the packet, by one byte.
        assert!(!vnet_hdr_ok(&hdr(NEEDS_CSUM, 0, 0, 0, 20, 27), 48));
        assert!(vnet_hdr_ok(&hdr(NEEDS_CSUM, 0, 0, 0, 20, 26), 48));
        // Segmentation (TCPv4), a segment size, an unknown flag, a header past the packet.
        assert!(!vnet_hdr_ok(&hdr(NEEDS_CSUM, 1, 40, 1448, 20, 16), 48));
        assert!(!vnet_hdr_ok(&hdr(0, 0, 0, 1448, 0, 0), 48));
        assert!(!vnet_hdr_ok(&hdr(4, 0, 0, 0, 0, 0), 48));
        assert!(!vnet_hdr_ok(&hdr(0, 0, 49, 0, 0, 0), 48));
        assert!(!vnet_hdr_ok(
            &hdr(NEEDS_CSUM, 0, 0, 0, u16::MAX, u16::MAX),
            48
        ));
    }
}
