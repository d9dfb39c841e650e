-- Winning bids: per auction, the highest bid made while it was open
-- (dateTime <= bid < expires) at or above its reserve; the earliest of
-- equal prices, then the lowest bidder.
SELECT json_object('auction', auction, 'price', price, 'bidder', bidder, 'dateTime', dateTime)
FROM (
  SELECT b.auction, b.price, b.bidder, b.dateTime,
         row_number() OVER (PARTITION BY b.auction
                            ORDER BY b.price DESC, b.dateTime ASC, b.bidder ASC) AS rank
  FROM auction a JOIN bid b ON b.auction = a.id
  WHERE b.dateTime >= a.dateTime AND b.dateTime < a.expires AND b.price >= a.reserve
)
WHERE rank = 1;
