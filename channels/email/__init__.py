"""Email: IMAP in (IDLE, else polling) through aioimaplib, SMTP out through aiosmtplib; a thread is a session."""
