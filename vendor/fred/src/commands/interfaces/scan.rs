// `impl Trait` doesn't work inside traits, so we just put these functions directly on the RedisClient
