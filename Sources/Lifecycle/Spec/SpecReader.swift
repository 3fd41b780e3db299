import JSON
import Capture
import Vocabulary

/// Reads one JSON object of a spec, tracking the field path for error messages and
/// rejecting fields it does not know (so a typo is an error, not a silent default).
struct SpecReader {
    let file: String
    let path: String
    let object: JSONObject

    init(file: String, path: String, value: JSONValue) throws(SpecError) {
        guard let object = value.objectValue else {
            throw SpecError(file: file, field: path, message: "expected an object, found \(value.typeName)")
        }
        self.file = file
        self.path = path
        self.object = object
    }

    func field(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func fail(_ key: String, _ message: String) -> SpecError {
        SpecError(file: file, field: field(key), message: message)
    }

    /// Rejects any key not in `known`.
    func only(_ known: [String]) throws(SpecError) {
        for key in object.keys where !known.contains(key) {
            throw fail(key, "unknown field (expected one of: \(known.joined(separator: ", ")))")
        }
    }

    func value(_ key: String) -> JSONValue? {
        guard let v = object[key], !v.isNull else { return nil }
        return v
    }

    func string(_ key: String) throws(SpecError) -> String? {
        guard let v = value(key) else { return nil }
        guard let s = v.stringValue else { throw fail(key, "expected a string, found \(v.typeName)") }
        return s
    }

    func requiredString(_ key: String) throws(SpecError) -> String {
        guard let s = try string(key) else { throw fail(key, "missing (expected a string)") }
        return s
    }

    func number(_ key: String) throws(SpecError) -> Double? {
        guard let v = value(key) else { return nil }
        guard let d = v.doubleValue else { throw fail(key, "expected a number, found \(v.typeName)") }
        return d
    }

    /// A duration in seconds, not negative and below `maxDurationSeconds`; the message
    /// names the limit the value broke (a positive value too large is not "below 0").
    func seconds(_ key: String) throws(SpecError) -> Micros? {
        guard let d = try number(key) else { return nil }
        guard d >= 0 else { throw fail(key, "expected seconds >= 0, found \(d)") }
        guard d < maxDurationSeconds else {
            throw fail(key, "expected seconds below \(Int64(maxDurationSeconds)) (about 31 years), found \(d)")
        }
        return micros(seconds: d)
    }

    func requiredSeconds(_ key: String) throws(SpecError) -> Micros {
        guard let s = try seconds(key) else { throw fail(key, "missing (expected seconds)") }
        return s
    }

    /// A whole number of at least 1 (a count of attempts).
    func count(_ key: String) throws(SpecError) -> Int? {
        guard let v = value(key) else { return nil }
        guard let i = v.intValue, i >= 1, i <= 1_000_000 else {
            throw fail(key, "expected a whole number from 1 to 1000000, found \(JSONWriter.serialize(v))")
        }
        return Int(i)
    }

    func bool(_ key: String) throws(SpecError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard let b = v.boolValue else { throw fail(key, "expected true or false, found \(v.typeName)") }
        return b
    }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) throws(SpecError) -> T?
    where T.RawValue == String {
        guard let s = try string(key) else { return nil }
        guard let v = T(rawValue: s) else {
            throw fail(key, "unknown value \"\(s)\" (expected one of: \(T.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return v
    }

    /// A protocol table entry's name (`LifecycleSpec.EventLevel`).
    func eventLevel(_ key: String) throws(SpecError) -> LifecycleSpec.EventLevel? {
        guard let s = try string(key) else { return nil }
        guard let v = LifecycleSpec.EventLevel(rawValue: s) else {
            throw fail(key, "unknown value \"\(s)\" (expected one of: \(LifecycleSpec.EventLevel.names.joined(separator: ", ")))")
        }
        return v
    }

    func array(_ key: String) throws(SpecError) -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard let a = v.arrayValue else { throw fail(key, "expected an array, found \(v.typeName)") }
        return a
    }

    func child(_ key: String) throws(SpecError) -> SpecReader? {
        guard let v = value(key) else { return nil }
        return try SpecReader(file: file, path: field(key), value: v)
    }

    func closeCode(_ key: String) throws(SpecError) -> UInt16? {
        guard let v = value(key) else { return nil }
        guard let i = v.intValue, (0...65535).contains(i) else {
            throw fail(key, "expected a close code (0-65535), found \(JSONWriter.serialize(v))")
        }
        return UInt16(i)
    }
}
