import CZstd

/// Compresses each buffer a capture writer flushes into one complete zstd frame (with a
/// content checksum), so the file is always a run of whole frames plus at most one cut
/// short by a crash: everything up to the last flush decompresses. One compression context
/// is reused for every frame; not thread-safe (the writer calls it under its file lock).
final class ZstdFrameEncoder {
    /// zstd's own default: about 3x smaller captures at several hundred MB/s per core.
    static let level: Int32 = 3
    /// Windows stay within what `DecompressingByteSource` accepts (a frame is at most one
    /// flush, a few MiB, so this rarely bites).
    static let windowLog: Int32 = 23

    private let context: OpaquePointer

    init() throws(CaptureError) {
        guard let context = ZSTD_createCCtx() else {
            throw CaptureError(file: "", line: 0, offset: 0, message: "cannot allocate a zstd compressor")
        }
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Self.level)
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
        ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, Self.windowLog)
        self.context = context
    }

    deinit { ZSTD_freeCCtx(context) }

    /// One zstd frame holding `bytes`, or the error text.
    func compress(_ bytes: [UInt8]) -> Result<[UInt8], CaptureError> {
        let bound = ZSTD_compressBound(bytes.count)
        var result: Int = 0
        let frame = [UInt8](unsafeUninitializedCapacity: bound) { out, initialized in
            result = bytes.withUnsafeBytes { input in
                ZSTD_compress2(context, out.baseAddress, bound, input.baseAddress, input.count)
            }
            initialized = ZSTD_isError(result) != 0 ? 0 : result
        }
        if ZSTD_isError(result) != 0 {
            return .failure(CaptureError(file: "", line: 0, offset: 0, message: "zstd: \(String(cString: ZSTD_getErrorName(result)))"))
        }
        return .success(frame)
    }
}
