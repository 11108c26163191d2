//! What the network tests share: a project and temp directory, and
//! waiting for a connection with a deadline.
#![allow(dead_code)]

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// `root` (the project) and `tmp` in a directory of their own, removed on drop.
pub struct Dirs(pub PathBuf);

impl Dirs {
    pub fn new(label: &str) -> Dirs {
        static N: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir().join(format!(
            "dsh-{label}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        for d in ["root", "tmp"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        Dirs(base)
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The connection that arrives on `listener` within a few seconds, if one does.
pub fn arrives(listener: &TcpListener) -> Option<TcpStream> {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match listener.accept() {
            Ok((s, _)) => return Some(s),
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
            Err(e) => panic!("{e}"),
        }
    }
}
