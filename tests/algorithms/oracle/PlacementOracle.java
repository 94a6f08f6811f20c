/*
 * The placement referee: Kafka 3.9's own AdminUtils.assignReplicasToBrokers (kafka-server-common
 * 3.9.x, on its own classpath), fed one case per line on stdin, one answer per line on stdout.
 * tests/algorithms/kafka_oracle.py compiles it, feeds it and compares with kgitops.placement.
 *
 * Input lines (fields separated by one space):
 *   A <fixedStartIndex> <nPartitions> <replicationFactor> <startPartitionId> <brokers>
 *       AdminUtils.assignReplicasToBrokers(brokers, nPartitions, rf, fixedStartIndex,
 *       startPartitionId), brokers in the order given.
 *   N <numPartitions> <brokers> <existing>
 *       Kafka 3.9's ZooKeeper-era added-partitions rule (core/src/main/scala/kafka/zk/
 *       AdminZkClient.scala, createNewPartitionsAssignment) on top of AdminUtils: partition 0
 *       must exist, the count must grow, startIndex = max(0, brokersSortedById.indexWhere(_.id >=
 *       existing(0).head)), then assignReplicasToBrokers(brokers sorted by id, numPartitions -
 *       existing.size, existing(0).size, startIndex, existing.size). The brokers are sorted by
 *       id as AdminZkClient.getBrokerMetadatas returns them.
 *   <brokers>  "-" (none) or comma-separated "id" (no rack) or "id@hex" (rack = the UTF-8 bytes
 *              in hex; "id@" is the empty rack).
 *   <existing> "-" (none) or "/"-separated "partition:replica.replica..." ("p:" = no replicas).
 *
 * Output lines: "OK p:r.r.r p:r.r.r ..." (partitions ascending) or "ERR <exception class simple
 * name> <message>" for whatever Kafka throws (a refusal must be a refusal in kgitops too).
 */

import org.apache.kafka.admin.AdminUtils;
import org.apache.kafka.admin.BrokerMetadata;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.TreeMap;

public final class PlacementOracle {
    private PlacementOracle() {
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                // an empty line asks for a flush, so a driver can read what it sent so far
                out.flush();
                continue;
            }
            String answer;
            try {
                answer = render(answer(line));
            } catch (RuntimeException e) {
                String message = e.getMessage() == null ? "" : e.getMessage();
                answer = "ERR " + e.getClass().getSimpleName() + " " + message.replace('\n', ' ');
            }
            out.write(answer);
            out.write('\n');
        }
        out.flush();
    }

    private static Map<Integer, List<Integer>> answer(String line) {
        String[] f = line.split(" ", -1);
        switch (f[0]) {
            case "A":
                return AdminUtils.assignReplicasToBrokers(brokers(f[5]), Integer.parseInt(f[2]),
                    Integer.parseInt(f[3]), Integer.parseInt(f[1]), Integer.parseInt(f[4]));
            case "N":
                return addedPartitions(Integer.parseInt(f[1]), brokers(f[2]), existing(f[3]));
            default:
                throw new IllegalArgumentException("unknown case kind " + f[0]);
        }
    }

    /** AdminZkClient.createNewPartitionsAssignment (3.9) without a manual assignment. */
    private static Map<Integer, List<Integer>> addedPartitions(int numPartitions, List<BrokerMetadata> brokers,
                                                               Map<Integer, List<Integer>> existing) {
        List<Integer> partition0 = existing.get(0);
        if (partition0 == null)
            throw new org.apache.kafka.server.common.AdminOperationException(
                "Unexpected existing replica assignment for topic 't', partition id 0 is missing. Assignment: "
                    + existing);
        int partitionsToAdd = numPartitions - existing.size();
        if (partitionsToAdd <= 0)
            throw new org.apache.kafka.common.errors.InvalidPartitionsException(
                "The number of partitions for a topic can only be increased. Topic t currently has "
                    + existing.size() + " partitions, " + numPartitions + " would not be an increase.");
        List<BrokerMetadata> sorted = new ArrayList<>(brokers);
        sorted.sort(Comparator.comparingInt(b -> b.id));
        int found = -1;
        for (int i = 0; i < sorted.size(); i++) {
            // Scala's existing(0).head, evaluated per broker as indexWhere's predicate does
            if (partition0.isEmpty())
                throw new NoSuchElementException("head of empty list");
            if (sorted.get(i).id >= partition0.get(0)) {
                found = i;
                break;
            }
        }
        int startIndex = Math.max(0, found);
        return AdminUtils.assignReplicasToBrokers(sorted, partitionsToAdd, partition0.size(), startIndex,
            existing.size());
    }

    private static List<BrokerMetadata> brokers(String field) {
        List<BrokerMetadata> result = new ArrayList<>();
        if (field.equals("-"))
            return result;
        for (String item : field.split(",", -1)) {
            int at = item.indexOf('@');
            if (at < 0) {
                result.add(new BrokerMetadata(Integer.parseInt(item), Optional.empty()));
            } else {
                String rack = new String(hex(item.substring(at + 1)), StandardCharsets.UTF_8);
                result.add(new BrokerMetadata(Integer.parseInt(item.substring(0, at)), Optional.of(rack)));
            }
        }
        return result;
    }

    private static Map<Integer, List<Integer>> existing(String field) {
        Map<Integer, List<Integer>> result = new TreeMap<>();
        if (field.equals("-"))
            return result;
        for (String item : field.split("/", -1)) {
            int colon = item.indexOf(':');
            List<Integer> replicas = new ArrayList<>();
            String rest = item.substring(colon + 1);
            if (!rest.isEmpty())
                for (String r : rest.split("\\.", -1))
                    replicas.add(Integer.parseInt(r));
            result.put(Integer.parseInt(item.substring(0, colon)), replicas);
        }
        return result;
    }

    private static byte[] hex(String text) {
        byte[] bytes = new byte[text.length() / 2];
        for (int i = 0; i < bytes.length; i++)
            bytes[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        return bytes;
    }

    private static String render(Map<Integer, List<Integer>> assignment) {
        StringBuilder sb = new StringBuilder("OK");
        for (Map.Entry<Integer, List<Integer>> e : new TreeMap<>(assignment).entrySet()) {
            sb.append(' ').append(e.getKey()).append(':');
            List<Integer> replicas = e.getValue();
            for (int i = 0; i < replicas.size(); i++) {
                if (i > 0)
                    sb.append('.');
                sb.append(replicas.get(i));
            }
        }
        return sb.toString();
    }
}
