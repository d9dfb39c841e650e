-- Loads person.jsonl, auction.jsonl and bid.jsonl from the working
-- directory (as `beamjoin nexmark generate` writes them) into tables of
-- the same names. Run before q3.sql, q8.sql or q9.sql:
--   cd DIR && cat load.sql q3.sql | sqlite3 :memory:
CREATE TABLE person AS SELECT
  value->>'id' AS id, value->>'name' AS name, value->>'city' AS city,
  value->>'state' AS state, value->>'dateTime' AS dateTime
FROM json_each('[' || replace(trim(readfile('person.jsonl'), char(10)), char(10), ',') || ']');
CREATE TABLE auction AS SELECT
  value->>'id' AS id, value->>'reserve' AS reserve, value->>'dateTime' AS dateTime,
  value->>'expires' AS expires, value->>'seller' AS seller, value->>'category' AS category
FROM json_each('[' || replace(trim(readfile('auction.jsonl'), char(10)), char(10), ',') || ']');
CREATE TABLE bid AS SELECT
  value->>'auction' AS auction, value->>'bidder' AS bidder, value->>'price' AS price,
  value->>'dateTime' AS dateTime
FROM json_each('[' || replace(trim(readfile('bid.jsonl'), char(10)), char(10), ',') || ']');
CREATE INDEX person_id ON person(id);
CREATE INDEX bid_auction ON bid(auction);
