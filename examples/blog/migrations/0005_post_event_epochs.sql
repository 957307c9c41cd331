-- Event ids that tell a database's epoch apart (docs/blog.md, "The live feed"): the ids of
-- post_events start at the time this migration ran, in ms × 1000, instead of 1. A database made
-- later (a new memory:// one after a restart, a new server) starts above every id an earlier one
-- gave out, so the feed knows a client's Last-Event-ID from another epoch (below this one's start)
-- or from a restored database's lost future (above its newest id) and sends it live events
-- instead of holding them back until the ids pass it. The sequence's own start value is the
-- epoch's first id: nothing else records it.
DO $$
DECLARE
  first_id bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint * 1000;
BEGIN
  EXECUTE format('ALTER SEQUENCE post_events_id_seq START WITH %s RESTART', first_id);
END
$$;
