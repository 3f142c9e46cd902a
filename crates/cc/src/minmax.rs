//! Windowed min/max filter (Kathleen Nichols' algorithm, lib/win_minmax.c), used by the TCP
//! endpoint for min_rtt and by BBR for its bandwidth filter; it lives here so both can reach it.

#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    t: u32,
    v: u32,
}

/// Tracks the best, second-best and third-best samples over a sliding window.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinMax {
    s: [Sample; 3],
}

impl MinMax {
    pub fn get(&self) -> u32 {
        self.s[0].v
    }
    /// `minmax_reset`.
    pub fn reset(&mut self, t: u32, v: u32) {
        self.s = [Sample { t, v }; 3];
    }
    /// `minmax_running_min`.
    pub fn running_min(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let val = Sample { t, v };
        if v <= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            self.reset(t, v);
            return v;
        }
        if v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
    /// `minmax_running_max`.
    pub fn running_max(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let val = Sample { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
    /// `minmax_subwin_update`: age out the best sample and promote the others.
    fn subwin_update(&mut self, win: u32, val: Sample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn min_expires_after_window() {
        let mut m = MinMax::default();
        m.reset(0, 100);
        assert_eq!(m.running_min(10, 1, 50), 50);
        assert_eq!(m.running_min(10, 5, 80), 50);
        // At t=20 the 50 sample (t=1) is out of the window: 80 or newer wins.
        assert!(m.running_min(10, 20, 90) >= 80);
    }
}
