import CPcap
import Glibc

/// A `FILE` that reads another through `PcapngInterfaceTypes` (glibc's `fopencookie`), so
/// libpcap sees a pcapng's later interfaces with the link type it expects. The file is read
/// straight into the stream's buffer and filtered there. Owned by the stream: closing the
/// stream (libpcap's `pcap_close`) closes the file it reads and frees this object.
final class InterfaceTypeStream {
    private let source: UnsafeMutablePointer<FILE>
    @exclusivity(unchecked) private(set) var types = PcapngInterfaceTypes()
    /// The start of a block header the last read cut (fewer than `longestHeader` bytes):
    /// filtered again at the start of the next read, with the bytes after it.
    @exclusivity(unchecked) private var held: [UInt8] = []
    /// Filtered bytes not handed out yet: only for a read too small to hold a header.
    @exclusivity(unchecked) private var ready: [UInt8] = []
    @exclusivity(unchecked) private var readyStart = 0
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

    /// Reads into `buffer` (libpcap's stdio buffer, 8 KiB or more) and filters the bytes there.
    private func read(into buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
        let copied: Int
        if readyStart < ready.count || size <= PcapngInterfaceTypes.longestHeader {
            // A read too small to filter in (glibc never asks for one): through `ready`.
            if readyStart == ready.count {
                ready = [UInt8](repeating: 0, count: 64 * 1024)
                let count = ready.withUnsafeMutableBytes { fill($0) }
                ready.removeSubrange(count...)
                readyStart = 0
            }
            copied = min(size, ready.count - readyStart)
            if copied > 0 {
                ready.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress! + readyStart, byteCount: copied) }
            }
            readyStart += copied
        } else {
            copied = fill(UnsafeMutableRawBufferPointer(start: buffer, count: size))
        }
        position += Int64(copied)
        return copied
    }

    /// Fills `area` (more than `longestHeader` bytes) with the held bytes and then the
    /// file's, filters them in place, and returns how many are final; 0 only at the end.
    private func fill(_ area: UnsafeMutableRawBufferPointer) -> Int {
        guard !sourceEnded else { return 0 }  // nothing is held once the file ended
        var count = held.count
        if count > 0 {
            held.withUnsafeBytes { area.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: count) }
            held.removeAll(keepingCapacity: true)
        }
        if !sourceEnded {
            let wanted = area.count - count
            let got = fread(area.baseAddress! + count, 1, wanted, source)
            if got < wanted { sourceEnded = true }
            count += got
        }
        let filtered = types.filter(UnsafeMutableRawBufferPointer(rebasing: area[0 ..< count]))
        // At the end of the file a cut header passes as it is.
        if sourceEnded { return count }
        held.append(contentsOf: UnsafeRawBufferPointer(rebasing: area[filtered ..< count]))
        return filtered
    }
}
