-- As ../0008_stored_xml_schemas.sql: stored XSD documents beside JSON Schemas.
ALTER TABLE org_schemas ADD COLUMN kind TEXT COLLATE "C" NOT NULL DEFAULT 'json_schema';
ALTER TABLE org_schemas ADD COLUMN target_namespace TEXT COLLATE "C";

CREATE INDEX org_schemas_by_namespace ON org_schemas (org_id, kind, target_namespace);
