-- Query 3, local item suggestion: one JSON row per auction in category 10
-- whose seller lives in OR, ID or CA (an unbounded inner join).
SELECT json_object('name', p.name, 'city', p.city, 'state', p.state, 'id', a.id)
FROM auction a JOIN person p ON a.seller = p.id
WHERE p.state IN ('OR', 'ID', 'CA') AND a.category = 10;
