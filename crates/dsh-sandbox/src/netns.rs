//! The network namespace of commands that reach the network only through
//! the filtering proxy: made once, with only loopback, where the proxy's
//! ports are listening sockets made inside it and handed out.
//!
//! A forked child makes it (`unshare(CLONE_NEWNET)`; not as root, with a
//! user namespace mapping our own ids), brings loopback up, listens on
//! 127.0.0.1 at each port, and sends the listeners and descriptors of its
//! namespaces to its parent (`SCM_RIGHTS` over a socket pair) before it
//! exits. The descriptors keep the namespace alive; commands join it
//! ([`crate::ChildConfig::network_namespace`]); the proxy accepts on the
//! listeners from its own namespace. Nothing else exists there: no route,
//! no address but loopback's, so a command reaches the proxy and the
//! servers commands of the same namespace run, nothing more.

use crate::child::{effective_ids, in_child, in_child_status, write_file};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// At most this many ports listen in a [`NetworkNamespace`].
pub const MAX_LOOPBACK_PORTS: usize = 4;

/// Listening sockets made in a [`NetworkNamespace`], by port.
pub type LoopbackListeners = Vec<(u16, std::net::TcpListener)>;

/// A network namespace with only loopback (see the module doc).
#[derive(Debug)]
pub struct NetworkNamespace {
    /// `/proc/…/ns/net` of the namespace.
    pub(crate) net: OwnedFd,
    /// `/proc/…/ns/user` of the user namespace owning it, when it was made
    /// by another user than root (joining needs that one first).
    pub(crate) user: Option<OwnedFd>,
}

/// What the making child needs, prepared before `fork` (it may not
/// allocate).
struct Recipe {
    ports: [u16; MAX_LOOPBACK_PORTS],
    len: usize,
    /// `uid_map` and `gid_map` when a user namespace is needed.
    maps: Option<(Vec<u8>, Vec<u8>)>,
    channel: RawFd,
}

impl NetworkNamespace {
    /// Makes a network namespace with only loopback, where each of `ports`
    /// listens on 127.0.0.1; the namespace and the listeners, by port.
    ///
    /// # Errors
    /// More than [`MAX_LOOPBACK_PORTS`] ports or a port 0, or the kernel
    /// refused a step (named by its errno).
    ///
    /// ```
    /// use dsh_sandbox::{network_namespaces_available, NetworkNamespace};
    /// if network_namespaces_available() {
    ///     let (namespace, listeners) = NetworkNamespace::create(&[47011]).unwrap();
    ///     assert_eq!(listeners[0].0, 47011);
    ///     // In this namespace nothing listens at 47011; in the other, we do.
    ///     assert!(std::net::TcpStream::connect(listeners[0].1.local_addr().unwrap()).is_err());
    ///     drop(namespace);
    /// }
    /// ```
    pub fn create(ports: &[u16]) -> io::Result<(Arc<NetworkNamespace>, LoopbackListeners)> {
        if ports.len() > MAX_LOOPBACK_PORTS || ports.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("1 to {MAX_LOOPBACK_PORTS} loopback ports, none of them 0"),
            ));
        }
        let (uid, gid) = effective_ids();
        let maps = (uid != 0).then(|| {
            (
                format!("{uid} {uid} 1\n").into_bytes(),
                format!("{gid} {gid} 1\n").into_bytes(),
            )
        });
        let context = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("cannot make the commands' network namespace: {e}"),
            )
        };
        let (parent, child) = socket_pair().map_err(context)?;
        let mut recipe = Recipe {
            ports: [0; MAX_LOOPBACK_PORTS],
            len: ports.len(),
            maps,
            channel: child.as_raw_fd(),
        };
        recipe.ports[..ports.len()].copy_from_slice(ports);
        let status = in_child_status(&|| make(&recipe));
        drop(child);
        if status != 0 {
            return Err(context(io::Error::from_raw_os_error(status)));
        }
        let (payload, mut fds) = receive_fds(&parent).map_err(context)?;
        let expected = ports.len() + 1 + usize::from(recipe.maps.is_some());
        if fds.len() != expected || payload.len() != 2 * ports.len() {
            return Err(io::Error::other(format!(
                "the namespace's maker sent {} descriptors for {} ports",
                fds.len(),
                ports.len()
            )));
        }
        let user = recipe.maps.is_some().then(|| fds.remove(ports.len() + 1));
        let net = fds.remove(ports.len());
        let listeners = payload
            .chunks_exact(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .zip(fds.into_iter().map(std::net::TcpListener::from))
            .collect();
        Ok((Arc::new(NetworkNamespace { net, user }), listeners))
    }
}

/// The making child's work; an errno on failure. Plain system calls, no
/// allocation: it runs in a forked copy of a multi-threaded process.
fn make(recipe: &Recipe) -> i32 {
    let errno = || {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    let code = |e: io::Error| e.raw_os_error().unwrap_or(libc::EIO);
    let mut flags = libc::CLONE_NEWNET;
    if recipe.maps.is_some() {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: `unshare` takes flags only.
    if unsafe { libc::unshare(flags) } != 0 {
        return errno();
    }
    if let Some((uid_map, gid_map)) = &recipe.maps {
        let mapped = write_file(c"/proc/self/uid_map", uid_map)
            .and_then(|()| write_file(c"/proc/self/setgroups", b"deny"))
            .and_then(|()| write_file(c"/proc/self/gid_map", gid_map));
        if let Err(e) = mapped {
            return code(e);
        }
    }
    if let Err(e) = loopback_up() {
        return code(e);
    }
    let mut fds = [-1 as RawFd; MAX_LOOPBACK_PORTS + 2];
    let mut payload = [0u8; 2 * MAX_LOOPBACK_PORTS];
    for (i, port) in recipe.ports[..recipe.len].iter().enumerate() {
        match listen_loopback(*port) {
            Ok(fd) => fds[i] = fd,
            Err(e) => return code(e),
        }
        payload[2 * i..2 * i + 2].copy_from_slice(&port.to_ne_bytes());
    }
    let mut n = recipe.len;
    let mut namespaces: [&std::ffi::CStr; 2] = [c"/proc/self/ns/net", c"/proc/self/ns/user"];
    let wanted = if recipe.maps.is_some() { 2 } else { 1 };
    for path in &mut namespaces[..wanted] {
        // SAFETY: `path` is NUL-terminated.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return errno();
        }
        fds[n] = fd;
        n += 1;
    }
    match send_fds(recipe.channel, &payload[..2 * recipe.len], &fds[..n]) {
        Ok(()) => 0,
        Err(e) => code(e),
    }
}

/// `ifconfig lo up`, by `ioctl`.
fn loopback_up() -> io::Result<()> {
    // SAFETY: `socket` takes no pointers.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: an all-zero `ifreq` is valid (a C struct of integers and a union).
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    req.ifr_name[0] = b'l' as libc::c_char;
    req.ifr_name[1] = b'o' as libc::c_char;
    // SAFETY: `req` is a valid `ifreq` naming `lo`, read and written by
    // the two `ioctl`s; `ifru_flags` is the member they use.
    let rc = unsafe {
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) < 0 {
            -1
        } else {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(fd, libc::SIOCSIFFLAGS, &req)
        }
    };
    let err = io::Error::last_os_error();
    // SAFETY: `fd` is ours, closed once.
    unsafe { libc::close(fd) };
    if rc < 0 {
        return Err(err);
    }
    Ok(())
}

/// A TCP socket listening on 127.0.0.1:`port`.
fn listen_loopback(port: u16) -> io::Result<RawFd> {
    // SAFETY: `socket` takes no pointers.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `addr` is a valid `sockaddr_in` of the size passed.
    let rc = unsafe {
        if libc::bind(
            fd,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ) < 0
        {
            -1
        } else {
            libc::listen(fd, libc::SOMAXCONN)
        }
    };
    if rc < 0 {
        let err = io::Error::last_os_error();
        // SAFETY: `fd` is ours, closed once.
        unsafe { libc::close(fd) };
        return Err(err);
    }
    Ok(fd)
}

/// Room for `SCM_RIGHTS` with [`MAX_LOOPBACK_PORTS`] descriptors and the
/// two of the namespaces, aligned as a `cmsghdr`.
#[repr(C, align(8))]
struct ControlBuffer([u8; 64]);

/// Sends `payload` with `fds` attached on the socket `channel`.
fn send_fds(channel: RawFd, payload: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let mut control = ControlBuffer([0; 64]);
    let fd_bytes = std::mem::size_of_val(fds) as libc::c_uint;
    let mut iov = libc::iovec {
        iov_base: payload.as_ptr() as *mut libc::c_void,
        iov_len: payload.len(),
    };
    // SAFETY: an all-zero `msghdr` is valid; the pointers set below point
    // into locals that outlive `sendmsg`; `CMSG_SPACE` of the descriptors
    // is checked to fit the 64-byte buffer, so `CMSG_FIRSTHDR` is non-null
    // and the header and data written stay inside it.
    unsafe {
        let space = libc::CMSG_SPACE(fd_bytes) as usize;
        if space > control.0.len() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(fd_bytes) as _;
        std::ptr::copy_nonoverlapping(
            fds.as_ptr().cast::<u8>(),
            libc::CMSG_DATA(cmsg),
            fd_bytes as usize,
        );
        if libc::sendmsg(channel, &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn probe_network_namespace() -> bool {
    // SAFETY: plain system calls in the probing child.
    let root = unsafe { libc::geteuid() } == 0;
    let mut flags = libc::CLONE_NEWNET;
    if !root {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: `unshare` takes flags only.
    if unsafe { libc::unshare(flags) } != 0 {
        return false;
    }
    let Ok(fd) = loopback_up().and_then(|()| listen_loopback(0)) else {
        return false;
    };
    // SAFETY: `fd` is the listener just made, closed once.
    unsafe { libc::close(fd) };
    true
}

/// Whether a network namespace with its loopback up and listening can be
/// made ([`crate::NetworkNamespace`]; probed once, in a forked child; as another
/// user than root, inside a user namespace). `DSH_SANDBOX_NO_NETNS=1` says
/// no (to try the fallback: Landlock's port rules alone).
pub fn network_namespaces_available() -> bool {
    if std::env::var_os("DSH_SANDBOX_NO_NETNS").is_some_and(|v| v == "1") {
        return false;
    }
    static SEEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SEEN.get_or_init(|| in_child(probe_network_namespace))
}

fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as libc::c_int; 2];
    // SAFETY: `socketpair` writes two descriptors into the 2-element array.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are ours alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// One message waiting on `socket`: its bytes and the descriptors it
/// carried (owned now).
fn receive_fds(socket: &OwnedFd) -> io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut payload = [0u8; 2 * MAX_LOOPBACK_PORTS];
    let mut control = ControlBuffer([0; 64]);
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: payload.len(),
    };
    let mut received: Vec<OwnedFd> = Vec::new();
    // SAFETY: an all-zero `msghdr` is valid; its pointers point into locals
    // that outlive `recvmsg`; the control messages the kernel wrote are
    // walked with the `CMSG_*` macros within `msg_controllen`, and each
    // descriptor in `SCM_RIGHTS` is new and ours to own.
    let n = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = control.0.len() as _;
        let n = libc::recvmsg(
            socket.as_raw_fd(),
            &mut msg,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        );
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg);
                let bytes = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                for i in 0..bytes / std::mem::size_of::<RawFd>() {
                    let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                    received.push(OwnedFd::from_raw_fd(fd));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        if msg.msg_flags & libc::MSG_CTRUNC != 0 {
            return Err(io::Error::other("the namespace's message was truncated"));
        }
        n as usize
    };
    Ok((payload[..n].to_vec(), received))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_ports_or_port_zero_are_refused() {
        for ports in [&[1u16, 2, 3, 4, 5][..], &[0][..]] {
            let e = NetworkNamespace::create(ports).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        }
    }

    #[test]
    fn nothing_waiting_is_an_error_not_a_hang() {
        let (parent, _child) = socket_pair().unwrap();
        let e = receive_fds(&parent).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock, "{e}");
    }
}
