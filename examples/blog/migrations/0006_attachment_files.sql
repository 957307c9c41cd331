-- Attachment bytes leave the database (docs/blog.md, "Where the files are kept"): from now on each
-- file is written to the attachments directory, streamed, and this table holds only what is known
-- of it, so an upload no longer passes through the database engine (on PGlite, through the
-- server's own event loop). Rows written before keep their bytes here and are served from them;
-- new rows have none.
ALTER TABLE attachments ALTER COLUMN bytes DROP NOT NULL;
ALTER TABLE attachments DROP CONSTRAINT attachments_size_check;
ALTER TABLE attachments
  ADD CONSTRAINT attachments_size_check CHECK (bytes IS NULL OR size = octet_length(bytes));

-- Names and media types as uploads are now cleaned and checked (docs/uploads.md): no format
-- characters (a right-to-left override shows "evil<U+202E>txt.exe" as "evilexe.txt"), and a media
-- type RFC 6838 allows, at most 255 characters, else application/octet-stream.
UPDATE attachments
  SET name = coalesce(
    nullif(regexp_replace(name,
      '[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]',
      '', 'g'), ''),
    'upload')
  WHERE name ~ '[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]';
UPDATE attachments
  SET media_type = 'application/octet-stream'
  WHERE media_type !~* '^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$';
