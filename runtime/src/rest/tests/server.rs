use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

pub(crate) enum Reply {
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Chunked body written piece by piece.
    Chunks {
        status: u16,
        chunks: Vec<Vec<u8>>,
    },
    /// Chunked body of `content_type` written piece by piece.
    TypedChunks {
        status: u16,
        content_type: String,
        chunks: Vec<Vec<u8>>,
    },
    /// A JSON body sent chunked as it is, its `Content-Encoding` given.
    EncodedChunks {
        content_encoding: String,
        chunks: Vec<Vec<u8>>,
    },
    /// Close the connection without answering.
    Drop,
    /// Never answer.
    Hang,
}

impl Reply {
    pub fn json(status: u16, body: serde_json::Value) -> Reply {
        Reply::Respond {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }
    pub fn with_header(mut self, k: &str, v: &str) -> Reply {
        if let Reply::Respond { headers, .. } = &mut self {
            headers.push((k.into(), v.into()));
        }
        self
    }
    pub fn text(status: u16, body: &str) -> Reply {
        Reply::Respond { status, headers: vec![], body: body.as_bytes().to_vec() }
    }
}

type Handler = Arc<dyn Fn(&Recorded, usize) -> Reply + Send + Sync>;

pub(crate) struct TestServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
}

impl TestServer {
    pub async fn start(handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let handler: Handler = Arc::new(handler);
        let reqs = requests.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(serve(sock, handler.clone(), reqs.clone()));
            }
        });
        TestServer { url, requests }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn client(&self) -> crate::rest::Client {
        let mut config = crate::config::Config::new(self.url.parse().unwrap());
        config.qps = 0.0;
        config.default_namespace = "dflt".into();
        crate::rest::Client::new(config).unwrap()
    }
}

async fn serve(mut sock: TcpStream, handler: Handler, requests: Arc<Mutex<Vec<Recorded>>>) {
    let mut buf = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let mut tmp = [0u8; 4096];
            match sock.read(&mut tmp).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&tmp[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or_default().split(' ');
        let method = first.next().unwrap_or_default().to_owned();
        let path = first.next().unwrap_or_default().to_owned();
        let headers: Vec<(String, String)> =
            lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
        let len: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        buf.drain(..head_end + 4);
        while buf.len() < len {
            let mut tmp = [0u8; 4096];
            match sock.read(&mut tmp).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&tmp[..n]),
            }
        }
        let body: Vec<u8> = buf.drain(..len).collect();
        let rec = Recorded { method, path, headers, body };
        let index = {
            let mut r = requests.lock().unwrap();
            r.push(rec.clone());
            r.len() - 1
        };
        match handler(&rec, index) {
            Reply::Respond { status, headers, body } => {
                let mut out = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                let mut bytes = out.into_bytes();
                bytes.extend_from_slice(&body);
                if sock.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Reply::Chunks { status, chunks } => {
                if !write_chunks(&mut sock, status, "application/json", chunks).await {
                    return;
                }
            }
            Reply::TypedChunks { status, content_type, chunks } => {
                if !write_chunks(&mut sock, status, &content_type, chunks).await {
                    return;
                }
            }
            Reply::EncodedChunks { content_encoding, chunks } => {
                let head = format!("application/json\r\nContent-Encoding: {content_encoding}");
                if !write_chunks(&mut sock, 200, &head, chunks).await {
                    return;
                }
            }
            Reply::Drop => return,
            Reply::Hang => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
        }
    }
}

/// Writes a chunked response; `false` when the connection is gone.
async fn write_chunks(sock: &mut TcpStream, status: u16, content_type: &str, chunks: Vec<Vec<u8>>) -> bool {
    let head = format!("HTTP/1.1 {status} X\r\nTransfer-Encoding: chunked\r\nContent-Type: {content_type}\r\n\r\n");
    if sock.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    for c in chunks {
        let mut piece = format!("{:x}\r\n", c.len()).into_bytes();
        piece.extend_from_slice(&c);
        piece.extend_from_slice(b"\r\n");
        if sock.write_all(&piece).await.is_err() {
            return false;
        }
        let _ = sock.flush().await;
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    sock.write_all(b"0\r\n\r\n").await.is_ok()
}
