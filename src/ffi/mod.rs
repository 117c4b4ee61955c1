//! C ABI (todo)
