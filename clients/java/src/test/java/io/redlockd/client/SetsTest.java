package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redlockd.v1.LockOuterClass.AcquireManyRequest;
import redlockd.v1.LockOuterClass.InspectResponse;

/** Several resources at once: tryAcquireMany (all or none), each member an ordinary lease, releaseMany. */
class SetsTest {
  static final AcquireOptions TEN = AcquireOptions.defaults().ttl(Duration.ofSeconds(10));
  RedlockdClient client;
  String resource;

  @BeforeEach
  void connect() {
    client = Daemon.client();
    resource = Daemon.resource();
  }

  @AfterEach
  void close() {
    client.close();
  }

  List<String> members(String... names) {
    List<String> out = new ArrayList<>();
    for (String name : names) {
      out.add(resource + "/" + name);
    }
    return out;
  }

  /** Each name is free: a plain acquire gets it (and gives it back). */
  void assertFree(List<String> names) {
    for (String name : names) {
      assertTrue(client.tryAcquire(name, TEN).orElseThrow(() -> new AssertionError(name + " is held")).release());
    }
  }

  void assertHeld(List<String> names) {
    for (String name : names) {
      assertTrue(client.tryAcquire(name, TEN).isEmpty(), name + " is free");
    }
  }

  @Test
  void aSetIsGrantedSortedWithoutRepeatsWithOneValueAndATokenPerMember() {
    List<String> abc = members("a", "b", "c");
    Map<String, FencingToken> earlier = new HashMap<>();
    for (String name : abc) {
      Lease lease = client.tryAcquire(name, TEN).orElseThrow();
      assertTrue(lease.release());
      earlier.put(name, lease.fencingToken());
    }
    List<String> asked = List.of(abc.get(2), abc.get(0), abc.get(1), abc.get(0));
    List<Lease> leases = client.tryAcquireMany(asked, TEN.owner("junit-set")).orElseThrow(() -> new AssertionError("a free set was refused"));
    assertEquals(abc, leases.stream().map(Lease::resource).collect(Collectors.toList()), "not sorted, or repeats kept");
    assertEquals(1, leases.stream().map(Lease::value).distinct().count(), "the members hold more than one value");
    // Each member's token is its resource's: above that resource's last one (docs/design.md#the-fencing-token).
    for (Lease lease : leases) {
      assertTrue(lease.fencingToken().isAfter(earlier.get(lease.resource())), lease.resource());
      assertTrue(lease.remaining().compareTo(Duration.ofSeconds(9)) > 0, lease.toString());
      assertFalse(lease.toString().contains(lease.value()));
    }
    InspectResponse view = client.inspect(abc.get(1));
    assertTrue(view.getHeld());
    assertEquals("junit-set", view.getHolder().getOwner());
    assertEquals(abc, view.getSetMembersList());
    assertHeld(abc);
    assertTrue(client.releaseMany(leases));
    assertFree(abc);
  }

  @Test
  void aSetWithAMemberHeldElsewhereIsRefusedAndHoldsNoneOfTheOthers() throws Exception {
    List<String> abc = members("a", "b", "c");
    List<String> aAndC = List.of(abc.get(0), abc.get(2));
    Lease holder = client.tryAcquire(abc.get(1), TEN).orElseThrow();
    assertTrue(client.tryAcquireMany(abc, TEN).isEmpty(), "granted while a member is held");
    assertFree(aAndC);
    // Waiting never holds part of the set: while it waits, its free members stay free; once the
    // held one is released, the whole set is granted.
    CompletableFuture<Optional<List<Lease>>> waiting =
        CompletableFuture.supplyAsync(() -> client.tryAcquireMany(abc, TEN.wait(Duration.ofSeconds(10))));
    Thread.sleep(500);
    assertFalse(waiting.isDone(), "the set did not wait");
    assertFree(aAndC);
    assertTrue(holder.release());
    List<Lease> leases = waiting.get(15, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("not granted after the holder released"));
    assertEquals(abc, leases.stream().map(Lease::resource).collect(Collectors.toList()));
    assertTrue(leases.get(1).fencingToken().isAfter(holder.fencingToken()));
    assertTrue(client.releaseMany(leases));
  }

  @Test
  void eachMemberIsAnOrdinaryLockExtendedAndReleasedOnItsOwn() {
    List<String> abc = members("a", "b", "c");
    List<Lease> leases = client.tryAcquireMany(abc, TEN).orElseThrow();
    Lease first = leases.get(0);
    Lease second = leases.get(1);
    Lease third = leases.get(2);
    assertTrue(second.extend(Duration.ofSeconds(20)));
    assertTrue(second.remaining().compareTo(Duration.ofSeconds(19)) > 0);
    assertTrue(first.release());
    Lease again = client.tryAcquire(abc.get(0), TEN).orElseThrow(() -> new AssertionError("releasing one member did not free it"));
    assertTrue(again.fencingToken().isAfter(first.fencingToken()));
    assertTrue(again.release());
    assertHeld(abc.subList(1, 3));
    assertFalse(first.release(), "a member released twice");
    try (Lease member = third) {
      assertHeld(List.of(abc.get(2)));
    }
    assertFree(List.of(abc.get(2)));
    assertTrue(second.release());
    assertFree(List.of(abc.get(1)));
  }

  @Test
  void releaseManySaysFalseWhenAMemberWasNoLongerHeld() {
    List<String> ab = members("a", "b");
    List<Lease> leases = client.tryAcquireMany(ab, TEN).orElseThrow();
    assertTrue(leases.get(0).release());
    assertFalse(client.releaseMany(leases));
    assertFree(ab);
  }

  @Test
  void extendManyMovesEveryMembersValidityAndRefusesLeasesOfTwoSets() {
    List<String> ab = members("a", "b");
    List<Lease> short1 = client.tryAcquireMany(ab, TEN.ttl(Duration.ofSeconds(1))).orElseThrow();
    long before = short1.get(1).validUntilNanos();
    assertTrue(client.extendMany(short1, Duration.ofSeconds(20)));
    for (Lease lease : short1) {
      assertTrue(lease.validUntilNanos() > before + TimeUnit.SECONDS.toNanos(15), lease.toString());
    }
    List<Lease> other = client.tryAcquireMany(members("c"), TEN).orElseThrow();
    InvalidArgumentException mixed =
        assertThrows(InvalidArgumentException.class, () -> client.extendMany(List.of(short1.get(0), other.get(0))));
    assertTrue(mixed.getMessage().startsWith("invalid leases: "), mixed.getMessage());
    InvalidArgumentException none = assertThrows(InvalidArgumentException.class, () -> client.extendMany(List.of()));
    assertTrue(none.getMessage().startsWith("invalid leases: 0 leases; 1 to 16"), none.getMessage());
    assertTrue(client.releaseMany(short1));
    assertFalse(client.extendMany(short1), "a set given back is not extended");
    assertTrue(client.releaseMany(other));
  }

  @Test
  void seventeenResourcesAndBadMembersAreRefusedBeforeSendingInTheDaemonsWords() {
    List<String> seventeen = new ArrayList<>();
    for (int i = 0; i < 17; i++) {
      seventeen.add(String.format("%s/%02d", resource, i));
    }
    Object[][] cases = {
      {seventeen, "invalid resources: 17 names; 1 to 16 are allowed"},
      {Collections.nCopies(17, resource + "/a"), "invalid resources: 17 names; 1 to 16 are allowed"},
      {List.of(), "invalid resources: 0 names; 1 to 16 are allowed"},
      {List.of(resource + "/a", ""), "invalid resources: [1] is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8"},
      {List.of(resource + "/a", resource + "/b", "tab\there"),
        "invalid resources: [2] contains the control character '\\t'; only printable UTF-8 is allowed"},
    };
    try (RedlockdClient nowhere = RedlockdClient.builder().address("127.0.0.1:1").build()) {
      for (Object[] c : cases) {
        @SuppressWarnings("unchecked")
        List<String> bad = (List<String>) c[0];
        StatusRuntimeException daemon = assertThrows(StatusRuntimeException.class,
            () -> client.blockingStub().acquireMany(AcquireManyRequest.newBuilder().addAllResources(bad).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, daemon.getStatus().getCode());
        assertEquals(c[1], daemon.getStatus().getDescription());
        InvalidArgumentException ours = assertThrows(InvalidArgumentException.class, () -> nowhere.tryAcquireMany(bad, TEN));
        assertEquals(c[1], ours.getMessage());
      }
      LockingTest.assertMessage("invalid wait: ", () -> nowhere.tryAcquireMany(List.of("examples/x"), TEN.wait(Duration.ofSeconds(-1))));
      LockingTest.assertMessage("invalid options: a set's locks are exclusive", () -> nowhere.tryAcquireMany(List.of("examples/x"), TEN.shared()));
      InvalidArgumentException none = assertThrows(InvalidArgumentException.class, () -> nowhere.releaseMany(List.of()));
      assertEquals("invalid leases: 0 leases; 1 to 16 are allowed", none.getMessage());
    }
    List<Lease> leases = client.tryAcquireMany(seventeen.subList(0, 16), TEN).orElseThrow(() -> new AssertionError("sixteen names were refused"));
    assertEquals(16, leases.size());
    Lease other = client.tryAcquire(resource + "/other", TEN).orElseThrow();
    InvalidArgumentException mixed = assertThrows(InvalidArgumentException.class, () -> client.releaseMany(List.of(leases.get(0), other)));
    assertTrue(mixed.getMessage().startsWith("invalid leases: they hold more than one value"), mixed.getMessage());
    assertTrue(client.releaseMany(leases));
    assertTrue(other.release());
  }
}
