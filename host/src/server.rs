//! The listeners: connections accepted, TLS, and HTTP spoken on each; what a request then goes
//! through is [`crate::front`]'s.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use crate::app::App;
use crate::tls;

/// Accepts connections for as long as the process runs. With `tls`, each connection first
/// completes a TLS handshake (within [`tls::HANDSHAKE_TIMEOUT`]; a failure costs that
/// connection only) and speaks the HTTP version ALPN chose; without, HTTP/1.1 or HTTP/2 (prior
/// knowledge).
pub async fn serve(app: Arc<App>, listener: TcpListener, tls: Option<TlsAcceptor>) {
    loop {
        let (stream, peer) = accept(&listener).await;
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let Some(tls) = tls else {
                return serve_connection(app, stream, peer, None).await;
            };
            match tokio::time::timeout(tls::HANDSHAKE_TIMEOUT, tls.accept(stream)).await {
                Ok(Ok(stream)) => {
                    let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                    serve_connection(app, stream, peer, alpn.as_deref()).await;
                }
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

/// Longest pause after a failed `accept`.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// The next connection of `listener`. A failed `accept` never ends serving: out of file
/// descriptors (a flood of connections) or of kernel memory, it waits, from 10 ms doubling up
/// to [`ACCEPT_BACKOFF_MAX`], for connections to close, and tries again; the connections
/// waiting meanwhile stay in the kernel's backlog.
pub(crate) async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    let mut backoff = Duration::from_millis(10);
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(error) => {
                tracing::warn!(%error, retry_in_ms = backoff.as_millis(), "accepting a connection failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
            }
        }
    }
}

/// Serves HTTP on one connection: the version ALPN named, else whichever the client speaks.
async fn serve_connection<I>(app: Arc<App>, io: I, peer: SocketAddr, alpn: Option<&[u8]>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let app = app.clone();
        async move { Ok::<_, Infallible>(app.handle(req, peer).await) }
    });
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    let builder = match alpn {
        Some(tls::ALPN_H2) => builder.http2_only(),
        Some(tls::ALPN_HTTP1) => builder.http1_only(),
        _ => builder,
    };
    if let Err(e) = builder.serve_connection(TokioIo::new(io), service).await {
        tracing::debug!(%peer, error = %e, "connection closed with an error");
    }
}
