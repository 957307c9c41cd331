-- Record versions (docs/blog.md, "Versions and If-Match"): every change to what a view shows adds
-- one, so an ETag names a version and a write with If-Match applies only to the version it names.
ALTER TABLE users ADD COLUMN version integer NOT NULL DEFAULT 1;
ALTER TABLE posts ADD COLUMN version integer NOT NULL DEFAULT 1;
