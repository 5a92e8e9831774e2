//! A webhook receiver: a real HTTP server on loopback that records every request it gets and
//! answers as the test tells it (accept, fail, or never answer). It can be stopped and started
//! again on the same port: a receiver that is down for a while.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// How the receiver answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// This status, with no body.
    Status(u16),
    /// Nothing, ever: the request hangs until the sender gives up.
    Never,
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// What the receiver answered.
    pub status: u16,
    /// `Rentald-Event`, `Rentald-Delivery` and `Rentald-Signature`.
    pub event: String,
    pub delivery: String,
    pub signature: String,
    pub content_type: String,
    /// The body as sent.
    pub raw: String,
    /// The body as JSON.
    pub body: Value,
}

#[derive(Default)]
struct Log {
    received: Mutex<Vec<Received>>,
    answer: Mutex<Option<Answer>>,
}

pub struct Receiver {
    addr: SocketAddr,
    log: Arc<Log>,
    server: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Receiver {
    /// A receiver answering 204 on a free loopback port.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("receiver port");
        let receiver = Self {
            addr: listener.local_addr().expect("receiver address"),
            log: Arc::default(),
            server: Mutex::new(None),
        };
        receiver.answer(Answer::Status(204));
        receiver.serve(listener);
        receiver
    }

    /// `http://127.0.0.1:{port}{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn answer(&self, answer: Answer) {
        *self.log.answer.lock().expect("receiver") = Some(answer);
    }

    /// Every request received so far, in the order they arrived.
    pub fn received(&self) -> Vec<Received> {
        self.log.received.lock().expect("receiver").clone()
    }

    /// The requests it accepted (answered 2xx), in order.
    pub fn accepted(&self) -> Vec<Received> {
        let mut received = self.received();
        received.retain(|r| (200..300).contains(&r.status));
        received
    }

    /// Waits until it accepted at least `n` requests (for at most 60 s); those it accepted.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        for _ in 0..600 {
            let accepted = self.accepted();
            if accepted.len() >= n {
                return accepted;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "the receiver accepted {} requests, not {n}: {:#?}",
            self.accepted().len(),
            self.received()
        );
    }

    /// Stops listening and drops every open connection: the receiver is down.
    pub fn stop(&self) {
        if let Some(server) = self.server.lock().expect("server").take() {
            server.abort();
        }
    }

    /// Listens again on the same port.
    pub async fn restart(&self) {
        self.stop();
        let listener = crate::bind_again(self.addr).await;
        self.serve(listener);
    }

    fn serve(&self, listener: TcpListener) {
        let log = self.log.clone();
        let task = tokio::spawn(async move {
            // Dropping the set (when this task is aborted) aborts every connection.
            let mut connections = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let log = log.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let log = log.clone();
                        async move { Ok::<_, Infallible>(receive(&log, request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
                while connections.try_join_next().is_some() {}
            }
        });
        *self.server.lock().expect("server") = Some(task);
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn receive(
    log: &Log,
    request: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Full<Bytes>> {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (event, delivery, signature, content_type) = (
        header("Rentald-Event"),
        header("Rentald-Delivery"),
        header("Rentald-Signature"),
        header("Content-Type"),
    );
    let raw = request
        .into_body()
        .collect()
        .await
        .map(|body| String::from_utf8_lossy(&body.to_bytes()).into_owned())
        .unwrap_or_default();
    let answer = log
        .answer
        .lock()
        .expect("receiver")
        .unwrap_or(Answer::Status(204));
    let status = match answer {
        Answer::Status(status) => status,
        Answer::Never => std::future::pending().await,
    };
    // Recorded only when answered: what a receiver acknowledged or refused.
    log.received.lock().expect("receiver").push(Received {
        status,
        event,
        delivery,
        signature,
        content_type,
        body: serde_json::from_str(&raw).unwrap_or(Value::Null),
        raw,
    });
    let mut response = hyper::Response::new(Full::new(Bytes::new()));
    *response.status_mut() = hyper::StatusCode::from_u16(status).expect("a status");
    response
}
