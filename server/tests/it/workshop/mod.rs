//! The workshop: the sandbox a student's Lua runs in, and the judge.
