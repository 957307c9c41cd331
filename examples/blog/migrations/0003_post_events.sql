-- The live feed (docs/blog.md, "The live feed"): a row each time a post becomes published, however
-- it happened (created published, the publish route, an update of its status), and a notification
-- on the post_events channel, which every instance listening on this database receives. The id
-- orders events and is what a reconnecting client's Last-Event-ID names. Publishing transactions
-- take one lock until they commit, so ids become visible in their order: a reader that has seen
-- id 11 never later finds an id 10 committed behind it.
CREATE TABLE post_events (
  id      bigserial   PRIMARY KEY,
  post_id uuid        NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
  at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX post_events_at_idx ON post_events (at);

CREATE FUNCTION post_became_published() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'published' AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM 'published') THEN
    PERFORM pg_advisory_xact_lock(hashtext('proceed-blog:post_events'));
    INSERT INTO post_events (post_id) VALUES (NEW.id);
    PERFORM pg_notify('post_events', '');
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER post_became_published
  AFTER INSERT OR UPDATE OF status ON posts
  FOR EACH ROW EXECUTE FUNCTION post_became_published();
