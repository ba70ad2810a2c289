-- Stored schemas of another kind than JSON Schema (issue 23): XSD documents that xml_schema steps
-- include or import, by schemaLocation (the URI) or by namespace (target_namespace). `schema`
-- holds the JSON text of a JSON Schema or the XML text of an XSD document.
-- kind: 'json_schema' | 'xsd' (checked by src/schemas/service.ts; more kinds may follow).
-- target_namespace: the XSD's targetNamespace ('' when it has none); NULL for JSON Schemas.

ALTER TABLE org_schemas ADD COLUMN kind TEXT NOT NULL DEFAULT 'json_schema';
ALTER TABLE org_schemas ADD COLUMN target_namespace TEXT;

CREATE INDEX org_schemas_by_namespace ON org_schemas (org_id, kind, target_namespace);
