import CUV

/// A Swift object that owns one libuv handle and is its `handle->data`.
///
/// Ownership rule for every handle in this module: the handle memory is allocated with a
/// fixed address, `data` holds a *retained* `Unmanaged` reference to the owner, and the
/// close callback releases it and frees the memory. So an open handle keeps its owner
/// alive (no dangling `data`), and the owner lives until the handle is closed, either by
/// the user or by `EventLoop.close()` walking the loop.
protocol HandleOwner: AnyObject {
    /// Closes the handle as if the user had called `close()`/`cancel()`.
    func closeForLoopShutdown()
}

extension HandleOwner {
    /// Reads the owner back from a handle's `data`, without changing its retain count.
    static func owner(of handle: UnsafeMutablePointer<uv_handle_t>?) -> Self? {
        guard let data = handle?.pointee.data else { return nil }
        return Unmanaged<Self>.fromOpaque(data).takeUnretainedValue()
    }

    /// Takes back the retain stored in `data` (the close callback's job) and clears `data`.
    static func release(from handle: UnsafeMutablePointer<uv_handle_t>?) -> Self? {
        guard let handle, let data = handle.pointee.data else { return nil }
        handle.pointee.data = nil
        return Unmanaged<Self>.fromOpaque(data).takeRetainedValue()
    }
}
