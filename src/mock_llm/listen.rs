//! The mock's accept loop: HTTP/1.1 and HTTP/2 with prior knowledge (h2c) on
//! one port, told apart by the connection preface. `axum::serve` would do the
//! same but keeps hyper's default of 200 concurrent streams per connection,
//! which would cap a benchmark of a thousand calls in flight over HTTP/2.

use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;

/// Streams one HTTP/2 connection may carry at once: more than any job here
/// keeps in flight.
const MAX_CONCURRENT_STREAMS: u32 = 65_536;

/// Connections the kernel may hold for the accept loop. tokio's `bind`
/// asks for 1,024: a job opening a thousand connections at once on a busy
/// machine overflowed it, and each dropped handshake cost its call a second
/// (the client's SYN is resent after 1 s; `sparring bench` counts them). The
/// kernel caps the figure at `net.core.somaxconn` (4,096 here).
const BACKLOG: u32 = 8192;

/// How long connections get to finish their requests once the server stops.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Listen on `addr` with room for a burst of [`BACKLOG`] connections.
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As tokio's `TcpListener::bind` does: a restarted server may take the
    // port of one whose connections are still in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// Serve `app` on `listener` until `stopping` changes or closes.
pub async fn serve(listener: TcpListener, app: Router, mut stopping: watch::Receiver<()>) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http2()
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS);
    let graceful = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopping.changed() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: wait instead of spinning.
                tracing::warn!("mock model server cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Replies are small and written at once; Nagle would only delay them.
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let connection = builder
            .serve_connection(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("mock model server connection ended: {e}");
            }
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
}
