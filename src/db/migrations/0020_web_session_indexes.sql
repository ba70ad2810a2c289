-- Every sign-in removes expired sessions (src/web/store.ts, purgeExpired): a range seek into
-- web_sessions_expires, oldest first, instead of a scan of every session. A password change and an
-- administrator's reset end a user's other sessions, and deleting a user cascades into their
-- sessions: seeks into web_sessions_user. Indexes only: an older node works as before.
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
CREATE INDEX web_sessions_user ON web_sessions (user_id);
