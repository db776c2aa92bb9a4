//! Properties of the HTTP/1.1 response decoder ([`super::framing::Decoder`]):
//! any split of any valid response decodes to the same response, and any
//! bytes, split any way, never make it panic.

use proptest::prelude::*;

use super::framing::{Decoder, Framing, Response, MAX_BODY_BYTES};

/// How a generated response frames its body.
#[derive(Debug, Clone)]
enum Frame {
    Length,
    /// Chunk sizes to cut the body by (cycled), with or without extensions
    /// and trailers.
    Chunked {
        sizes: Vec<usize>,
        extensions: bool,
        trailers: bool,
    },
    UntilClose,
}

#[derive(Debug, Clone)]
struct Valid {
    status: u16,
    interim: bool,
    retry_after: Option<u32>,
    body: Vec<u8>,
    frame: Frame,
}

fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        Just(Frame::Length),
        (
            prop::collection::vec(1usize..64, 1..6),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(sizes, extensions, trailers)| Frame::Chunked {
                sizes,
                extensions,
                trailers
            }),
        Just(Frame::UntilClose),
    ]
}

fn valid() -> impl Strategy<Value = Valid> {
    (
        prop_oneof![Just(200u16), Just(429), Just(500), Just(503), 200u16..600],
        any::<bool>(),
        prop::option::of(0u32..3600),
        prop::collection::vec(any::<u8>(), 0..600),
        frame(),
    )
        .prop_map(|(status, interim, retry_after, body, frame)| {
            // These statuses carry no body whatever the headers say.
            let status = if status == 204 || status == 304 {
                200
            } else {
                status
            };
            Valid {
                status,
                interim,
                retry_after,
                body,
                frame,
            }
        })
}

impl Valid {
    fn wire(&self) -> Vec<u8> {
        let mut wire = Vec::new();
        if self.interim {
            wire.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        wire.extend_from_slice(format!("HTTP/1.1 {} Whatever\r\n", self.status).as_bytes());
        wire.extend_from_slice(b"Content-Type: application/json\r\n");
        if let Some(after) = self.retry_after {
            wire.extend_from_slice(format!("Retry-After: {after}\r\n").as_bytes());
        }
        match &self.frame {
            Frame::Length => {
                wire.extend_from_slice(
                    format!("Content-Length: {}\r\n\r\n", self.body.len()).as_bytes(),
                );
                wire.extend_from_slice(&self.body);
            }
            Frame::UntilClose => {
                wire.extend_from_slice(b"\r\n");
                wire.extend_from_slice(&self.body);
            }
            Frame::Chunked {
                sizes,
                extensions,
                trailers,
            } => {
                wire.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                let mut rest = self.body.as_slice();
                for size in sizes.iter().cycle() {
                    if rest.is_empty() {
                        break;
                    }
                    let (chunk, after) = rest.split_at((*size).min(rest.len()));
                    let extension = if *extensions { ";a=b" } else { "" };
                    wire.extend_from_slice(format!("{:X}{extension}\r\n", chunk.len()).as_bytes());
                    wire.extend_from_slice(chunk);
                    wire.extend_from_slice(b"\r\n");
                    rest = after;
                }
                wire.extend_from_slice(b"0\r\n");
                if *trailers {
                    wire.extend_from_slice(b"X-Trailer: 1\r\n");
                }
                wire.extend_from_slice(b"\r\n");
            }
        }
        wire
    }
}

/// Feed `wire` to a decoder in the pieces `cuts` make (positions, any
/// order), as reads from a socket would; the server closes after the last.
fn decode_in_pieces(wire: &[u8], cuts: &[usize]) -> Result<Response, String> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
    cuts.push(wire.len());
    cuts.sort_unstable();
    let mut decoder = Decoder::default();
    let mut buf = Vec::new();
    let mut at = 0;
    for cut in cuts {
        buf.extend_from_slice(&wire[at..cut]);
        at = cut;
        let _ = decoder.wanted(buf.len());
        if let Some(response) = decoder.decode(&mut buf)? {
            return Ok(response);
        }
    }
    decoder.finish(buf)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_split_of_a_valid_response_decodes_to_the_same_response(
        response in valid(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let wire = response.wire();
        let whole = decode_in_pieces(&wire, &[]).unwrap();
        let split = decode_in_pieces(&wire, &cuts).unwrap();
        prop_assert_eq!(&split, &whole);
        prop_assert_eq!(split.head.status, response.status);
        prop_assert_eq!(&split.body, &response.body);
        prop_assert_eq!(split.head.retry_after, response.retry_after.map(|s| s.to_string()));
        let until_close = matches!(response.frame, Frame::UntilClose);
        prop_assert_eq!(split.head.framing == Framing::UntilClose, until_close);
        prop_assert_eq!(split.keep_alive, !until_close);
    }

    #[test]
    fn bytes_after_a_response_end_keep_alive_but_not_the_response(
        response in valid(),
        extra in prop::collection::vec(any::<u8>(), 1..40),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        prop_assume!(!matches!(response.frame, Frame::UntilClose));
        let mut wire = response.wire();
        wire.extend_from_slice(&extra);
        let split = decode_in_pieces(&wire, &cuts).unwrap();
        prop_assert_eq!(&split.body, &response.body);
        // Read together with the response, stray bytes end keep-alive; read
        // later, the pool finds them before reuse (`pool::is_closed`).
        let whole = decode_in_pieces(&wire, &[]).unwrap();
        prop_assert!(!whole.keep_alive, "a connection with stray bytes is not reused");
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        if let Ok(response) = decode_in_pieces(&bytes, &cuts) {
            prop_assert!(response.body.len() <= MAX_BODY_BYTES);
        }
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_head_never_panic(
        head in prop_oneof![
            Just(&b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"[..]),
            Just(&b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"[..]),
            Just(&b"HTTP/1.1 100 Continue\r\n\r\n"[..]),
            Just(&b"HTTP/1.0 200 OK\r\n\r\n"[..]),
        ],
        bytes in prop::collection::vec(any::<u8>(), 0..1024),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut wire = head.to_vec();
        wire.extend_from_slice(&bytes);
        let _ = decode_in_pieces(&wire, &cuts);
    }
}
