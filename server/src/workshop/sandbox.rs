//! A sandbox `redis-server` for untrusted Lua (to be built: see the workshop issue).
