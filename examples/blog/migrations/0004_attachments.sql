-- Post attachments (docs/blog.md, "Attachments"): the files uploaded to a post, kept here by the
-- default AttachmentStore so that every instance on this database serves the same ones. They go
-- with their post. `sha256` (lower-case hex) is the file's ETag; `size` is its length in bytes.
CREATE TABLE attachments (
  id         uuid        PRIMARY KEY,
  post_id    uuid        NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
  name       text        NOT NULL,
  media_type text        NOT NULL,
  size       integer     NOT NULL,
  sha256     text        NOT NULL CONSTRAINT attachments_sha256_check CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes      bytea       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT attachments_size_check CHECK (size = octet_length(bytes))
);

-- The cascade when a post is deleted.
CREATE INDEX attachments_post_id_idx ON attachments (post_id);
