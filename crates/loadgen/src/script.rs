//! The moves the generator plays: a fill of the whole board in which neither side ever has more
//! than two stones in a row, so a scripted game never ends by a line and every move is legal.
//!
//! Cell (x, y) belongs to X when `(x + 2y) / 2` is even. Along a line with step (dx, dy) the
//! index `x + 2y` advances by `dx + 2dy`, which is 1, 2, 3 or -1 for the four directions: never
//! a multiple of 4, so the colour pattern `XXOO` repeats and no run is longer than two.

/// X's cells and O's cells interleaved (X first), as long as both have cells left.
pub fn fill(size: u8) -> Vec<(u8, u8)> {
    let mut xs = Vec::new();
    let mut os = Vec::new();
    for y in 0..size {
        for x in 0..size {
            if ((x as u32 + 2 * y as u32) / 2) % 2 == 0 {
                xs.push((x, y));
            } else {
                os.push((x, y));
            }
        }
    }
    let mut out = Vec::with_capacity(xs.len() + os.len());
    let mut o = os.into_iter();
    for x in xs {
        out.push(x);
        match o.next() {
            Some(c) => out.push(c),
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn longest_run(size: u8, moves: &[(u8, u8)]) -> usize {
        let n = size as i32;
        let mut board = vec![0u8; (n * n) as usize];
        for (i, &(x, y)) in moves.iter().enumerate() {
            let cell = &mut board[(y as i32 * n + x as i32) as usize];
            assert_eq!(*cell, 0, "({x}, {y}) played twice");
            *cell = 1 + (i % 2) as u8;
        }
        let at = |x: i32, y: i32| {
            if (0..n).contains(&x) && (0..n).contains(&y) {
                board[(y * n + x) as usize]
            } else {
                0
            }
        };
        let mut best = 0;
        for (dx, dy) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
            for y in 0..n {
                for x in 0..n {
                    let c = at(x, y);
                    if c == 0 {
                        continue;
                    }
                    let mut r = 0;
                    while at(x + r * dx, y + r * dy) == c {
                        r += 1;
                    }
                    best = best.max(r as usize);
                }
            }
        }
        best
    }

    #[test]
    fn no_side_ever_has_three_in_a_row() {
        for size in [5, 15, 19, 32] {
            let m = fill(size);
            assert!(
                m.len() + 1 >= size as usize * size as usize,
                "{size}: {}",
                m.len()
            );
            assert_eq!(longest_run(size, &m), 2, "size {size}");
        }
        assert_eq!(fill(15).len(), 225);
        assert_eq!(fill(32).len(), 1024);
    }
}
