// Posix
