package io.github.beamjoin.peers;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.co.ProcessJoinFunction;
import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Flink's own DataStream interval join on the input of beamjoin's pipeline benchmarks, for make
 * bench-flink: the peer a team on Flink would write instead of a Beam pipeline.
 *
 * <p>The input is made here from the same formula as the Go benchmarks' generator ({@code genSpec}
 * in transforms/join/pipeline_bench_test.go): element i belongs to key i % keys and is the j-th
 * element of its key, j = i / keys; even j are left elements, odd j right ones, {@code gap} after
 * their left partner; pairs start {@code pair} apart; keys are staggered by gap / keys, so that event
 * time rises with i. The key is "key-%05d", the value i in decimal padded with 'v' to {@code value}
 * characters. One reader (parallelism 1) emits them in order, with the watermark at the time of the
 * element less 1 ms after every {@code every} elements, as the Go generator reports it; the two
 * sides are split from it, keyed, and joined with {@code intervalJoin} in event time at the job's
 * parallelism, each pair sent to a sink that counts it.
 *
 * <pre>
 * java -cp CLASSPATH io.github.beamjoin.peers.IntervalJoinBench \
 *     --n 100000 --keys 1000 --pair 8000 --gap 2000 --value 16 --every 1000 \
 *     --lower -5000 --upper 5000 --parallelism 2
 * </pre>
 *
 * <p>It prints {@code pairs=P net-runtime-ms=T}; every element has one partner, so P is n / 2.
 */
public final class IntervalJoinBench {
  /** The event time of element 0, in milliseconds: genEpoch in the Go generator. */
  static final long EPOCH = 1_700_000_000_000L;

  /** An element of either side. Flink serializes it as a POJO. */
  public static final class Element {
    public String key;
    public String value;
    public long time;

    public Element() {}

    Element(String key, String value, long time) {
      this.key = key;
      this.value = value;
      this.time = time;
    }
  }

  /** A pair of the join: what the Go joins' records hold. */
  public static final class Pair {
    public String key;
    public String left;
    public String right;
    public long leftTime;
    public long rightTime;

    public Pair() {}
  }

  /** The generator's formula; Serializable, as Flink ships it to its tasks. */
  static final class Spec implements java.io.Serializable {
    final long n;
    final long keys;
    final long pair;
    final long gap;
    final int value;
    final long every;

    Spec(Map<String, Long> a) {
      n = a.get("n");
      keys = a.get("keys");
      pair = a.get("pair");
      gap = a.get("gap");
      value = a.get("value").intValue();
      every = a.get("every");
    }

    long time(long i) {
      long k = i % keys;
      long j = i / keys;
      return EPOCH + (j / 2) * pair + (j % 2) * gap + k * gap / keys;
    }

    boolean left(long i) {
      return (i / keys) % 2 == 0;
    }

    Element element(long i) {
      StringBuilder v = new StringBuilder(Long.toString(i));
      while (v.length() < value) {
        v.append('v');
      }
      return new Element(String.format("key-%05d", i % keys), v.toString(), time(i));
    }
  }

  /** The watermark at an element's time less 1 ms after every {@code every} elements. */
  static final class EveryN implements WatermarkGenerator<Long> {
    private final long every;
    private long seen;

    EveryN(long every) {
      this.every = every;
    }

    @Override
    public void onEvent(Long i, long time, WatermarkOutput out) {
      if (++seen % every == 0) {
        out.emitWatermark(new Watermark(time - 1));
      }
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput out) {}
  }

  /** Counts the pairs in an accumulator that the job's result carries back. */
  static final class CountingSink extends RichSinkFunction<Pair> {
    private final LongCounter pairs = new LongCounter();

    @Override
    public void open(Configuration parameters) {
      getRuntimeContext().addAccumulator("pairs", pairs);
    }

    @Override
    public void invoke(Pair p, Context ctx) {
      pairs.add(1);
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, Long> a = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      a.put(args[i].replaceFirst("^--", ""), Long.parseLong(args[i + 1]));
    }
    for (String k : new String[] {"n", "keys", "pair", "gap", "value", "every", "lower", "upper", "parallelism"}) {
      if (!a.containsKey(k)) {
        System.err.println("IntervalJoinBench: --" + k + " is missing");
        System.exit(2);
      }
    }
    Spec spec = new Spec(a);
    long lower = a.get("lower");
    long upper = a.get("upper");
    int parallelism = a.get("parallelism").intValue();

    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(parallelism, new Configuration());
    env.setRuntimeMode(RuntimeExecutionMode.STREAMING);

    WatermarkStrategy<Long> watermarks =
        WatermarkStrategy.<Long>forGenerator(ctx -> new EveryN(spec.every))
            .withTimestampAssigner((i, previous) -> spec.time(i));
    OutputTag<Element> rightTag = new OutputTag<Element>("right") {};
    SingleOutputStreamOperator<Element> left =
        env.fromSource(new NumberSequenceSource(0, spec.n - 1), watermarks, "generate")
            .setParallelism(1)
            .process(
                new ProcessFunction<Long, Element>() {
                  @Override
                  public void processElement(Long i, Context ctx, Collector<Element> out) {
                    Element e = spec.element(i);
                    if (spec.left(i)) {
                      out.collect(e);
                    } else {
                      ctx.output(rightTag, e);
                    }
                  }
                })
            .setParallelism(1)
            .name("split");
    DataStream<Element> right = left.getSideOutput(rightTag);

    left.keyBy(e -> e.key)
        .intervalJoin(right.keyBy(e -> e.key))
        .inEventTime()
        .between(Duration.ofMillis(lower), Duration.ofMillis(upper))
        .process(
            new ProcessJoinFunction<Element, Element, Pair>() {
              @Override
              public void processElement(Element l, Element r, Context ctx, Collector<Pair> out) {
                Pair p = new Pair();
                p.key = l.key;
                p.left = l.value;
                p.right = r.value;
                p.leftTime = l.time;
                p.rightTime = r.time;
                out.collect(p);
              }
            })
        .name("intervalJoin")
        .addSink(new CountingSink())
        .name("count");

    JobExecutionResult res = env.execute("flink-intervaljoin");
    long pairs = res.<Long>getAccumulatorResult("pairs");
    System.out.println("pairs=" + pairs + " net-runtime-ms=" + res.getNetRuntime());
  }
}
