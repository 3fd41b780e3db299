import Vocabulary
import WebSocket

extension SeededGenerator {
    /// A generator for the `index`th of several simulated clients sharing one seed.
    public static func derived(seed: UInt64, index: Int) -> SeededGenerator {
        var mixer = SeededGenerator(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0xD134_2543_DE82_EF95))
        return SeededGenerator(seed: mixer.next())
    }
}
