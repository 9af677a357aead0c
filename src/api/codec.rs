//! The gRPC codec: prost, with small buffers. tonic's default gives every
//! call an 8 KiB encode and an 8 KiB decode buffer, which dominates the
//! memory of an open `Hold` session; every message here fits in well under
//! 1 KiB (requests are capped at `server.max_message_size`), and the buffers
//! still grow for a larger one.

use std::marker::PhantomData;

use tonic::codec::{BufferSettings, Codec};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

/// Starting size of each call's encode and decode buffer, in bytes.
const BUFFER_BYTES: usize = 128;
/// tonic's default: how much a stream encodes before yielding.
const YIELD_THRESHOLD: usize = 32 * 1024;

/// `ProstCodec` with `BUFFER_BYTES` buffers (set as the codec of the
/// generated service and client in `build.rs`).
#[derive(Debug, Clone)]
pub(crate) struct SmallCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for SmallCodec<T, U> {
    fn default() -> Self {
        SmallCodec(PhantomData)
    }
}

impl<T, U> Codec for SmallCodec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::raw_encoder(BufferSettings::new(BUFFER_BYTES, YIELD_THRESHOLD))
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstCodec::<T, U>::raw_decoder(BufferSettings::new(BUFFER_BYTES, YIELD_THRESHOLD))
    }
}
