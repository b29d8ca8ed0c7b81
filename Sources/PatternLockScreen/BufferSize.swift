// SPDX-License-Identifier: Apache-2.0
/// The size of one screen's wl_shm buffer (XRGB8888), checked: a compositor may
/// send any surface size and scale, and the arithmetic must never trap.
public struct BufferSize: Equatable, Sendable {
    /// No side longer than this is drawn (wlroots' own limit for a buffer is far below).
    public static let maximumSide: Int32 = 16384
    public let width: Int32
    public let height: Int32
    public let stride: Int32
    /// The pool's size in bytes (wl_shm_create_pool takes an int32).
    public let bytes: Int32

    /// The buffer for `width`×`height` logical pixels at `scale`; nil when that
    /// is empty, not a number, or absurd (then the surface is not drawn).
    public init?(width: Double, height: Double, scale: Int32) {
        guard width.isFinite, height.isFinite, width >= 1, height >= 1, scale >= 1,
            width <= Double(Self.maximumSide), height <= Double(Self.maximumSide)
        else { return nil }
        let (w, wo) = Int32(width).multipliedReportingOverflow(by: scale)
        let (h, ho) = Int32(height).multipliedReportingOverflow(by: scale)
        guard !wo, !ho, w <= Self.maximumSide, h <= Self.maximumSide else { return nil }
        let (s, so) = w.multipliedReportingOverflow(by: 4)
        let (b, bo) = s.multipliedReportingOverflow(by: h)
        guard !so, !bo else { return nil }
        self.width = w
        self.height = h
        stride = s
        bytes = b
    }
}
