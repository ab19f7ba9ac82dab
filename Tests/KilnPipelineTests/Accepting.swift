import KilnHTTP
import KilnModel

/// The class of a client sending `accept` (its `Accept` header, nil when absent) for the offered
/// formats, as the HTTP layer computes it.
func accepting(_ accept: String?, _ offered: [ImageFormat] = FormatNegotiation.defaultOffered) -> FormatNegotiation {
    FormatNegotiation(accept: accept, offered: offered)
}
