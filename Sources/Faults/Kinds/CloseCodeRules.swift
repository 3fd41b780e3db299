import WebSocket

/// Close codes a fault may put on the wire: 1000-4999 and sendable per RFC 6455 7.4.
enum CloseCodeRules {
    static func parse(_ text: String, rule: FaultRule) throws(FaultRuleError) -> UInt16 {
        guard let value = Int(text) else {
            throw rule.argumentError("close code must be a number, not '\(text)'")
        }
        guard (1000...4999).contains(value) else {
            throw rule.argumentError("close code \(value) outside 1000-4999")
        }
        let code = CloseCode(UInt16(value))
        switch value {
        case 1005, 1006, 1015:
            throw rule.argumentError("close code \(value) may not be sent on the wire (RFC 6455 7.4.1 reserves it for reporting)")
        default:
            guard code.isSendable else {
                throw rule.argumentError("close code \(value) may not be sent (RFC 6455 7.4.2: use 1000-1003, 1007-1014 or 3000-4999)")
            }
        }
        return UInt16(value)
    }

    /// The `reason=` option, which must fit a control frame with its code (123 bytes).
    static func reason(_ rule: FaultRule) throws(FaultRuleError) -> String {
        guard let option = rule.option("reason") else { return "" }
        guard option.value.utf8.count <= 123 else {
            throw rule.error("close reason of \(option.value.utf8.count) bytes (limit 123)", at: option)
        }
        return option.value
    }

    static func describe(code: UInt16, reason: String) -> String {
        reason.isEmpty ? "close \(code)" : "close \(code) '\(reason)'"
    }
}
