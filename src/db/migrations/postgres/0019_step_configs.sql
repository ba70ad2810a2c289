-- Step configs of workflow versions, stored once by the SHA-256 of their JSON text
-- (src/workflows/config-store.ts): a snapshot written from now on names each step's config by
-- `config_sha256` instead of holding it. Snapshots written before keep their configs inline and
-- are read as they are.
CREATE TABLE step_configs (
  sha256     TEXT COLLATE "C" PRIMARY KEY,
  config     TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
