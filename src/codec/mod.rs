//! Byte-level codecs: bytes or text in, framed values out, with their size bounds and typed
//! errors. No state beyond the partial frame being read, no meaning given to what they frame.
//!
//! The SSE decoder and the NDJSON line splitter frame the transports; `scan` holds the byte
//! searches they and the JSON readers share; `fast_chunk` reads the common text-delta chunk
//! without a JSON tree; `partial_json` reads a tool call's arguments while they stream.

pub mod fast_chunk;
#[cfg(feature = "pi")]
pub mod ndjson;
pub mod partial_json;
pub mod scan;
pub mod sse;
