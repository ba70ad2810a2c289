-- Migration 18 rebuilds SQLite tables so that the ids of deleted rows are never handed out again.
-- PostgreSQL's identity columns already never go back: nothing to change here.
SELECT 1;
