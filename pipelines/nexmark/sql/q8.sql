-- Query 8, monitor new users: one JSON row per person and auction of that
-- seller in the same 10 s tumbling window (aligned to the epoch).
SELECT json_object('id', p.id, 'name', p.name, 'reserve', a.reserve,
                   'window_start', p.dateTime / 10000 * 10000)
FROM person p JOIN auction a ON a.seller = p.id
WHERE p.dateTime / 10000 = a.dateTime / 10000;
