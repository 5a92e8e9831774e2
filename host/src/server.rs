//! The listeners: connections admitted ([`Gate`]), TLS, and HTTP spoken on each within the
//! front door's [`Limits`]; what a request then goes through is [`crate::front`]'s (the API)
//! or [`crate::probes`]' (the metrics listener).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use crate::app::App;
use crate::connection::{Activity, Gate, Limits};
use crate::probes;
use crate::response::Body;
use crate::tls;

/// What a listener answers.
#[derive(Debug, Clone, Copy)]
pub enum Site {
    /// The API, the token endpoint, the API document and the probes.
    Api,
    /// `/metrics` and the probes, for a private network.
    Metrics,
}

impl Site {
    async fn answer(
        self,
        app: &Arc<App>,
        request: Request<Incoming>,
        peer: SocketAddr,
    ) -> http::Response<Body> {
        match self {
            Self::Api => app.handle(request, peer).await,
            Self::Metrics => probes::answer(app, request.method(), request.uri().path()).await,
        }
    }
}

/// HTTP/2 streams open at once on one connection.
const H2_MAX_STREAMS: u32 = 100;
/// HTTP/2 streams a client may open and reset before the server has seen them (the "rapid
/// reset" flood), and streams the server may reset for a client's errors, before the
/// connection is closed.
const H2_MAX_RESETS: usize = 100;
/// Largest HTTP/2 header list, decoded.
const H2_MAX_HEADER_LIST: u32 = 64 << 10;
/// How long a connection closed for idleness may take to finish what it was writing.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Accepts connections for as long as the process runs, each admitted by `gate` (one past its
/// limits is closed at once). With `tls`, each connection first completes a TLS handshake
/// (within the header timeout; a failure costs that connection only) and speaks the HTTP
/// version ALPN chose; without, HTTP/1.1 or HTTP/2 (prior knowledge).
pub async fn serve(
    app: Arc<App>,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    site: Site,
    gate: Arc<Gate>,
) {
    loop {
        let (stream, peer) = accept(&listener).await;
        let admitted = match gate.admit(peer.ip()) {
            Ok(admitted) => admitted,
            Err(reason) => {
                tracing::debug!(%peer, reason = reason.as_str(), "connection refused");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let tls = tls.clone();
        let limits = *gate.limits();
        tokio::spawn(async move {
            let _admitted = admitted;
            let Some(tls) = tls else {
                return serve_connection(app, stream, peer, None, site, limits).await;
            };
            match tokio::time::timeout(limits.header_timeout, tls.accept(stream)).await {
                Ok(Ok(stream)) => {
                    let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                    serve_connection(app, stream, peer, alpn.as_deref(), site, limits).await;
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
async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
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

/// Serves HTTP on one connection: the version ALPN named, else whichever the client speaks;
/// closed once it has had no request in flight for longer than `limits` allow.
async fn serve_connection<I>(
    app: Arc<App>,
    io: I,
    peer: SocketAddr,
    alpn: Option<&[u8]>,
    site: Site,
    limits: Limits,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Activity::new();
    let service = hyper::service::service_fn({
        let activity = activity.clone();
        move |request| {
            let app = app.clone();
            let in_flight = activity.request();
            async move {
                let response = site.answer(&app, request, peer).await;
                drop(in_flight);
                Ok::<_, Infallible>(response)
            }
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(H2_MAX_STREAMS)
        .max_pending_accept_reset_streams(H2_MAX_RESETS)
        .max_local_error_reset_streams(H2_MAX_RESETS)
        .max_header_list_size(H2_MAX_HEADER_LIST);
    let builder = match alpn {
        Some(tls::ALPN_H2) => builder.http2_only(),
        Some(tls::ALPN_HTTP1) => builder.http1_only(),
        _ => builder,
    };
    let connection = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => {
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "connection closed with an error");
            }
        }
        () = activity.idle(&limits) => {
            tracing::debug!(%peer, "closing a connection with no request in flight");
            connection.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(CLOSE_GRACE, connection).await;
        }
    }
}
