import CPcap
import Glibc

/// A `FILE` that reads another through `PcapngInterfaceTypes` (glibc's `fopencookie`), so
/// libpcap sees a pcapng's later interfaces with the link type it expects. Owned by the
/// stream: closing the stream (libpcap's `pcap_close`) closes the file it reads and frees
/// this object.
final class InterfaceTypeStream {
    private let source: UnsafeMutablePointer<FILE>
    @exclusivity(unchecked) private(set) var types = PcapngInterfaceTypes()
    @exclusivity(unchecked) private var pending: [UInt8] = []
    @exclusivity(unchecked) private var pendingStart = 0
    @exclusivity(unchecked) private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    @exclusivity(unchecked) private var sourceEnded = false
    /// Bytes handed to the reader so far (its offset, for `ftello`).
    @exclusivity(unchecked) private var position: Int64 = 0

    private init(source: UnsafeMutablePointer<FILE>) { self.source = source }

    /// A stream reading `source` through the filter, and the filter's state; nil (with
    /// `source` still open) when the stream cannot be made.
    static func wrap(_ source: UnsafeMutablePointer<FILE>) -> (UnsafeMutablePointer<FILE>, InterfaceTypeStream)? {
        let stream = InterfaceTypeStream(source: source)
        let cookie = Unmanaged.passRetained(stream).toOpaque()
        let io = CPcap_cookie_io(read: { cookie, buffer, size in
            guard let cookie, let buffer else { return -1 }
            return Unmanaged<InterfaceTypeStream>.fromOpaque(cookie).takeUnretainedValue().read(into: buffer, Int(clamping: size))
        }, write: nil, seek: { cookie, offset, whence in
            // Only `ftello` is answered: where the reader is. The reader never seeks.
            guard let cookie, let offset, whence == SEEK_CUR, offset.pointee == 0 else { return -1 }
            offset.pointee = Unmanaged<InterfaceTypeStream>.fromOpaque(cookie).takeUnretainedValue().position
            return 0
        }, close: { cookie in
            guard let cookie else { return -1 }
            let stream = Unmanaged<InterfaceTypeStream>.fromOpaque(cookie).takeRetainedValue()
            return fclose(stream.source)
        })
        guard let file = CPcap_fopencookie(cookie, "rb", io) else {
            Unmanaged<InterfaceTypeStream>.fromOpaque(cookie).release()
            return nil
        }
        return (file, stream)
    }

    /// Why the file cannot be read with one link layer, once an interface with another
    /// one was met: what libpcap's own message ("corrupt packet record") would hide.
    var mixedLinkTypes: String? {
        guard let mixed = types.mixed else { return nil }
        return "pcapng interface \(mixed.interface) has link type \(mixed.linkType), interface 0 \(mixed.firstLinkType): "
            + "a file whose interfaces have different link layers is not supported (split it per interface, e.g. with tshark -r FILE -Y 'frame.interface_id == 0' -w PART)"
    }

    /// The file descriptor of the file read (for its size in messages).
    var sourceDescriptor: Int32 { fileno(source) }

    private func read(into buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
        var copied = 0
        while copied < size {
            if pendingStart < pending.count {
                let n = min(size - copied, pending.count - pendingStart)
                pending.withUnsafeBufferPointer { held in
                    UnsafeMutableRawPointer(buffer + copied).copyMemory(from: held.baseAddress! + pendingStart, byteCount: n)
                }
                pendingStart += n
                copied += n
                continue
            }
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
            if sourceEnded { break }
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, source) }
            chunk.withUnsafeBytes { types.feed(UnsafeRawBufferPointer(rebasing: $0[0 ..< count]), into: &pending) }
            if count < chunk.count {
                sourceEnded = true
                types.finish(into: &pending)
            }
        }
        position += Int64(copied)
        return copied
    }
}
