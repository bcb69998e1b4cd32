//! The request stream of a placement run: each client's requests, a
//! Poisson process, for keys of Zipf popularity (SPEC §9's workload).
//!
//! The stream is the same for every detector and distribution of a run
//! (one `rand_chacha` stream per seed, [`crate::rng`]'s placement
//! purpose), so they are compared on identical traffic.

use fdlab_protocol::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::dist::exponential;

/// Key popularity: `P(key i) ∝ 1 / (i + 1)^s`, sampled by inverse CDF.
#[derive(Clone, Debug)]
pub struct Zipf {
    /// `cdf[i]`: the probability of keys `0..=i`; the last is 1.
    cdf: Vec<f64>,
}

impl Zipf {
    pub fn new(keys: u32, exponent: f64) -> Zipf {
        debug_assert!(keys > 0 && exponent.is_finite() && exponent >= 0.0);
        let mut cdf = Vec::with_capacity(keys as usize);
        let mut total = 0.0;
        for i in 0..keys {
            total += libm::pow(f64::from(i) + 1.0, -exponent);
            cdf.push(total);
        }
        for c in &mut cdf {
            *c /= total;
        }
        if let Some(last) = cdf.last_mut() {
            *last = 1.0;
        }
        Zipf { cdf }
    }

    /// The key of a uniform draw `u` in [0, 1).
    pub fn key(&self, u: f64) -> u32 {
        let i = self.cdf.partition_point(|&c| c <= u);
        i.min(self.cdf.len() - 1) as u32
    }

    /// Key `i`'s probability.
    pub fn probability(&self, i: u32) -> f64 {
        let i = i as usize;
        self.cdf[i] - if i == 0 { 0.0 } else { self.cdf[i - 1] }
    }
}

/// One request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub at: Nanos,
    /// Client index (0 = the first client node).
    pub client: u32,
    pub key: u32,
}

/// The merged requests of every client, in time order.
#[derive(Clone, Debug)]
pub struct Requests<'z> {
    rng: ChaCha8Rng,
    zipf: &'z Zipf,
    clients: u32,
    /// Mean gap between two requests of the merged stream, nanoseconds.
    mean_gap: f64,
    /// The true time of the next request, fractional nanoseconds.
    next: f64,
}

impl<'z> Requests<'z> {
    pub fn new(rng: ChaCha8Rng, zipf: &'z Zipf, clients: u32, per_client_per_second: f64) -> Self {
        debug_assert!(clients > 0 && per_client_per_second > 0.0);
        let mean_gap = 1e9 / (f64::from(clients) * per_client_per_second);
        let mut r = Requests {
            rng,
            zipf,
            clients,
            mean_gap,
            next: 0.0,
        };
        r.next = exponential(&mut r.rng, mean_gap);
        r
    }

    /// When the next request comes.
    pub fn peek(&self) -> Nanos {
        Nanos(self.next as u64)
    }

    /// The next request.
    pub fn pop(&mut self) -> Request {
        let at = self.peek();
        let client = self.rng.random_range(0..self.clients);
        let key = self.zipf.key(self.rng.random::<f64>());
        self.next += exponential(&mut self.rng, self.mean_gap);
        Request { at, client, key }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn zipf_probabilities_by_hand() {
        // s = 1, 3 keys: 1, 1/2, 1/3 over 11/6: 6/11, 3/11, 2/11.
        let z = Zipf::new(3, 1.0);
        assert!((z.probability(0) - 6.0 / 11.0).abs() < 1e-12);
        assert!((z.probability(2) - 2.0 / 11.0).abs() < 1e-12);
        assert_eq!(z.key(0.0), 0);
        assert_eq!(z.key(6.0 / 11.0 - 1e-9), 0);
        assert_eq!(z.key(6.0 / 11.0 + 1e-9), 1);
        assert_eq!(z.key(0.999_999), 2);
        // s = 0: uniform.
        let u = Zipf::new(4, 0.0);
        assert!((u.probability(3) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn requests_come_at_the_rate_in_order_from_every_client() {
        let z = Zipf::new(100, 0.99);
        let rng = ChaCha8Rng::seed_from_u64(7);
        let mut r = Requests::new(rng, &z, 4, 1_000.0);
        let mut last = Nanos::ZERO;
        let mut per_client = [0u32; 4];
        let mut n = 0;
        while r.peek() < Nanos::from_secs(10) {
            let q = r.pop();
            assert!(q.at >= last);
            last = q.at;
            per_client[q.client as usize] += 1;
            n += 1;
        }
        // 4 clients x 1,000/s x 10 s = 40,000, Poisson: sd 200.
        assert!((39_000..41_000).contains(&n), "{n}");
        assert!(
            per_client.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{per_client:?}"
        );
    }
}
