-- Users, posts and password resets (docs/blog.md). Ids are UUIDv7 made by the app, so id order
-- is creation order and the cursor listings can page by id alone.

CREATE TABLE users (
  id            uuid        PRIMARY KEY,
  email         text        NOT NULL,
  name          text        NOT NULL,
  password_hash text        NOT NULL,
  role          text        NOT NULL DEFAULT 'user' CONSTRAINT users_role_check CHECK (role IN ('admin', 'user', 'guest')),
  is_active     boolean     NOT NULL DEFAULT true,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One account per email whatever its case (the app also stores emails lowercased).
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
-- GET /api/users sorted by createdAt (id breaks ties).
CREATE INDEX users_created_at_id_idx ON users (created_at, id);

CREATE TABLE posts (
  id         uuid        PRIMARY KEY,
  author_id  uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title      text        NOT NULL,
  content    text        NOT NULL,
  excerpt    text        NOT NULL,
  status     text        NOT NULL DEFAULT 'draft' CONSTRAINT posts_status_check CHECK (status IN ('draft', 'published', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The feed: WHERE status = 'published' AND id < $cursor ORDER BY id DESC.
CREATE INDEX posts_status_id_idx ON posts (status, id);
-- ?authorId= listings, and the cascade when a user is deleted.
CREATE INDEX posts_author_id_id_idx ON posts (author_id, id);

CREATE TABLE password_resets (
  token_hash text        PRIMARY KEY,
  user_id    uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

CREATE INDEX password_resets_user_id_idx ON password_resets (user_id);
