// Systemd
