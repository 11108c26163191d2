//! Copying between two sockets, with buffers big enough that a 100 MB body
//! costs few system calls. (A `splice(2)` version was tried: on the 2-core
//! bench machine it measured no faster, so the crate stays free of unsafe code.)

use crate::COPY_BUFFER;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

/// Copies both ways until both sides are done, shutting down each write side
/// when its source ends.
pub(crate) async fn bidirectional(a: &mut TcpStream, b: &mut TcpStream) {
    let _ = tokio::io::copy_bidirectional_with_sizes(a, b, COPY_BUFFER, COPY_BUFFER).await;
}

/// Copies `from` into `to` until `from` ends.
pub(crate) async fn one_way(from: &mut OwnedReadHalf, to: &mut OwnedWriteHalf) {
    let mut reader = tokio::io::BufReader::with_capacity(COPY_BUFFER, from);
    let _ = tokio::io::copy_buf(&mut reader, to).await;
}
