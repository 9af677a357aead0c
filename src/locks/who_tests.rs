//! Who asked, as audit lines name it: the resource read back from any
//! lock name (docs/design.md#layers).

use super::*;

#[test]
fn the_resource_is_read_back_from_any_lock_name() {
    assert_eq!(resource_of("lock:a:b"), "a:b");
    assert_eq!(resource_of("tenant:lock:lock:x"), "x");
    assert_eq!(resource_of("tenant:t1:lock:tenant:z"), "tenant:z");
    assert_eq!(resource_of("election:jobs"), "jobs");
    assert_eq!(resource_of("tenant:t1:election:lock:j"), "lock:j");
    assert_eq!(resource_of("tenant:only"), "tenant:only");
}
