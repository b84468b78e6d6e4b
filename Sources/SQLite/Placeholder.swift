// SQLite
